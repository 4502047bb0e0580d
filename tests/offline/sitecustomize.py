"""Imported by every Python process that the tests start (the folder is put on PYTHONPATH): refuse any
connection that leaves this machine, so that a notebook which tries to download something fails loudly
instead of quietly depending on the network. Loopback stays open: Jupyter kernels talk over it."""

import socket

_LOCAL_HOSTS = {"", "localhost", "0.0.0.0", "::", "::1", "ip6-localhost"}
MESSAGE = "network disabled while the course's tests run (tests/offline/sitecustomize.py)"


def _is_local(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    return host is None or (isinstance(host, str) and (host in _LOCAL_HOSTS or host.startswith("127.")))


def _guard(original):
    def guarded(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):
            raise OSError(f"{MESSAGE}: refused a connection to {address[0]}")
        return original(self, address)

    return guarded


def _guarded_getaddrinfo(host, *args, _original=socket.getaddrinfo, **kwargs):
    if not _is_local(host):
        raise socket.gaierror(f"{MESSAGE}: refused to look up {host}")
    return _original(host, *args, **kwargs)


socket.socket.connect = _guard(socket.socket.connect)
socket.socket.connect_ex = _guard(socket.socket.connect_ex)
socket.getaddrinfo = _guarded_getaddrinfo
