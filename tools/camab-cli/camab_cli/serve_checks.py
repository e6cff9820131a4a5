"""What ``camab serve`` checks before it starts a server: the port, the host, the key.

Why: vLLM binds its port only after loading the model, so a port another process holds
failed late, and when that process answered ``/health`` the command printed *its* URL as
the new server's; a non-loopback ``--host`` exposed the model to the network without a
word; and there was no way to require a key. So, before anything starts:

* :func:`check_port` binds the address the server would bind (``SO_REUSEADDR``, as
  uvicorn does) and releases it: taken, it is a :class:`PortInUseError` naming the port
  and whether what holds it answers ``/health``;
* :func:`check_host` refuses an address other machines can reach unless the caller
  allows it (``--allow-remote``), and then warns on stderr;
* :func:`api_key_from` reads the key that ``--api-key-env NAME`` names; vLLM receives it
  in its environment (``VLLM_API_KEY``, the same as its ``--api-key``), never on its
  command line, which every local user can read in ``/proc``, and it is never printed.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import sys
import urllib.error
import urllib.request

from camab_rag.errors import CamabError, InputError


class PortInUseError(CamabError, RuntimeError):
    """The port ``camab serve`` was asked for is held by another process (the message
    names it and what to do)."""


def url_host(host: str) -> str:
    """``host`` as a client on this machine reaches a server bound to it: a wildcard
    (``0.0.0.0``, ``::``, empty) is reached on loopback, an IPv6 address in brackets."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def is_loopback(host: str) -> bool:
    """Whether a server bound to ``host`` is reachable from this machine only (a loopback
    address, or a name that resolves to loopback addresses only).

    Raises:
        InputError: ``host`` is neither an address nor a name this machine resolves.
    """
    if host == "":
        return False  # every interface
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError as error:
        raise InputError(
            f"--host {host!r}: not an address this machine resolves ({error})"
        ) from None
    return all(ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos)


def check_host(host: str, *, allow_remote: bool, has_key: bool) -> None:
    """Refuse a ``host`` other machines can reach unless ``allow_remote``; when allowed,
    warn on stderr (and say how to require a key when ``has_key`` is false).

    Raises:
        InputError: a non-loopback host without ``allow_remote``.
    """
    if is_loopback(host):
        return
    where = f"--host {host!r}" if host else "--host '' (every interface)"
    if not allow_remote:
        raise InputError(
            f"{where} lets other machines reach the server, and anyone who reaches it can "
            "use the model: pass --allow-remote to mean it (with --api-key-env NAME to "
            "require a key), or leave --host at 127.0.0.1"
        )
    advice = "" if has_key else "; no key is required (--api-key-env NAME requires one)"
    print(
        f"camab: warning: {where} lets other machines reach the server{advice}",
        file=sys.stderr,
        flush=True,
    )


def check_port(host: str, port: int) -> None:
    """Make sure a server can bind ``host:port`` now (``port`` 0 always can).

    Raises:
        PortInUseError: another process holds the port.
        InputError: ``host`` is not an address of this machine, or the port needs
            privileges this process lacks.
    """
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except OSError as error:
        raise InputError(
            f"--host {host!r}: not an address this machine resolves ({error})"
        ) from None
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as error:
                raise _bind_error(host, port, error) from None


def _bind_error(host: str, port: int, error: OSError) -> CamabError:
    if error.errno == errno.EADDRINUSE:
        holder = (
            "a server that answers /health (another camab serve or vLLM?)"
            if _answers_health(url_host(host), port)
            else "another process"
        )
        return PortInUseError(
            f"port {port} on {host or 'every interface'} is already in use by {holder}: "
            "pick another --port, or --port 0 for a free one"
        )
    if error.errno == errno.EACCES:
        return InputError(
            f"--port {port}: this user may not bind it (ports below 1024 need privileges)"
        )
    return InputError(f"--host {host!r} --port {port}: cannot bind it ({error.strerror or error})")


def _answers_health(host: str, port: int) -> bool:
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy
    try:
        with direct.open(f"http://{host}:{port}/health", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def api_key_from(variable: str | None) -> str | None:
    """The key in environment variable ``variable`` (``None`` when no variable is named).

    Raises:
        InputError: the variable is named but not set, or empty.
    """
    if variable is None:
        return None
    key = os.environ.get(variable)
    if not key:
        raise InputError(f"--api-key-env {variable}: the variable is not set (or empty)")
    return key
