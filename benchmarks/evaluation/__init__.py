"""What the LDS benchmarks (``lds``, ``lds-design``) and ``proxy`` share: held-out subsets
and the LDS (:mod:`.lds`), top-k removal sets and gold AUROC (:mod:`.metrics`), and the
store of priced subsets with its JSONL files (:mod:`.store`). The paper-protocol harness
that lived here retired (issue 49); its last figures are at commit acfeaa6."""
