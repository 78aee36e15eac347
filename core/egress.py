"""Requests Docket makes to URLs that users gave it (webhooks): only to public addresses.

A URL is checked when it is saved (`egress_url_clean`) and its host again when a request is made
(`egress_connect`): the name is resolved once, every address it resolves to must be public, and
the connection goes to one of those checked addresses, so a name that resolves to a public address
when saved and to 127.0.0.1 when sent (DNS rebinding) reaches nothing. Refused: loopback,
private, shared (100.64/10), link-local, multicast, unspecified, reserved and documentation
addresses, IPv4 inside IPv6 (::ffff:127.0.0.1), and the cloud metadata addresses, whatever
spelling the host uses (127.1, 2130706433, 0x7f.1, [::1], localhost).

DOCKET_EGRESS_ALLOW_NETWORKS (empty by default) names networks that are let through anyway, for
a receiver on a private network or a test server on 127.0.0.1; the metadata addresses stay
refused even then.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

from core.errors import DomainError

URL_MAX = 2000
# Cloud instance metadata (AWS, GCP, Azure, Oracle, DigitalOcean: 169.254.169.254; AWS over
# IPv6; Alibaba): never reachable, even through the allow list.
METADATA = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200")
)
NOT_PUBLIC = "is not a public address (loopback, private, link-local, multicast or reserved)"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class EgressRefused(DomainError):
    """A URL or an address Docket will not send to."""

    code = "egress_refused"


def _allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(n, strict=False) for n in settings.DOCKET_EGRESS_ALLOW_NETWORKS]


def address_allowed(address: Address) -> bool:
    """True when `address` is public, or inside a network the allow list names (never metadata)."""
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None:
            address = mapped
        elif address.teredo is not None:
            address = address.teredo[1]
    if address in METADATA:
        return False
    if any(address in net for net in _allowed_networks()):
        return True
    return address.is_global and not address.is_multicast


def _host_addresses(host: str, port: int, *, numeric_only: bool) -> list[Address]:
    """The addresses `host` stands for (numeric forms such as 127.1 included); [] when a name
    does not resolve."""
    flags = socket.AI_NUMERICHOST if numeric_only else 0
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=flags)
    except (OSError, UnicodeError):
        return []
    return [ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in infos]


def egress_url_clean(url: str, *, field: str = "url") -> str:
    """Return an absolute http(s) URL Docket may send to; raise EgressRefused on `field`.

    Refused: another scheme, credentials, whitespace or control characters, a port outside
    1-65535, and a host that is, or resolves now to, an address `address_allowed` refuses. A name
    that does not resolve yet is accepted: it is checked again when something is sent.
    """
    url = (url or "").strip()
    if len(url) > URL_MAX:
        raise EgressRefused(f"at most {URL_MAX} characters", field=field)
    if any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url):
        raise EgressRefused("no spaces, line breaks or control characters", field=field)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EgressRefused("an absolute http:// or https:// URL", field=field)
    if "@" in parts.netloc:
        raise EgressRefused("no user name or password in the URL", field=field)
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port is None:
        port = 443 if parts.scheme == "https" else 80
    if not 1 <= port <= 65535:
        raise EgressRefused("a port from 1 to 65535", field=field)
    host = parts.hostname
    try:
        host.encode("idna")
    except UnicodeError:
        raise EgressRefused(f"{host!r} is not a valid host name", field=field) from None
    if host.rstrip(".") == "localhost" or host.rstrip(".").endswith(".localhost"):
        raise EgressRefused(f"{host} {NOT_PUBLIC}", field=field)
    numeric = _host_addresses(host, port, numeric_only=True)
    addresses = numeric or _host_addresses(host, port, numeric_only=False)
    if any(not address_allowed(a) for a in addresses):
        raise EgressRefused(f"{host} {NOT_PUBLIC}", field=field)
    return url


def egress_connect(host: str, port: int, timeout: float) -> socket.socket:
    """Resolve `host` once, refuse it unless every address is allowed, and connect to one of those
    addresses (EgressRefused; OSError when none answers)."""
    addresses = _host_addresses(host, port, numeric_only=False)
    if not addresses:
        raise OSError("no address")
    if any(not address_allowed(a) for a in addresses):
        raise EgressRefused(f"{host} {NOT_PUBLIC}", field="url")
    last: OSError = OSError("no address")
    for address in dict.fromkeys(addresses):
        try:
            return socket.create_connection((str(address), port), timeout=timeout)
        except OSError as exc:
            last = exc
    raise last
