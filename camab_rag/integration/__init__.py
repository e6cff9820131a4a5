"""The kernel every framework integration builds on: a captured chain call in, a result
(and what to attach to the framework's answer) out (:mod:`camab_rag.integration.kernel`)."""

from camab_rag.integration.kernel import *  # noqa: F403
from camab_rag.integration.kernel import __all__ as __all__
