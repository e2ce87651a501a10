"""VNPU_DEVICES for the daemons of a Kubernetes StatefulSet (`vnpu devices --k8s-service vnpu --replicas 4`).

A StatefulSet's pods behind a headless Service have stable DNS names, <service>-<ordinal>.<service>, so the
program's device k is device k % D of pod k // D (D devices per pod):

    0=ws://vnpu-0.vnpu:9470/0,1=ws://vnpu-1.vnpu:9470/0,...

With a namespace the names are fully qualified (vnpu-0.vnpu.<namespace>.svc.cluster.local), for jobs in other
namespaces. `client.routing.parse_devices` reads the result.
"""

from __future__ import annotations

import re

from proto.addresses import MAX_DEVICES

DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def statefulset_devices(
    service: str,
    replicas: int,
    devices_per_pod: int = 1,
    namespace: str | None = None,
    port: int = 9470,
    tls: bool = False,
    cluster_domain: str = "cluster.local",
) -> str:
    """The VNPU_DEVICES value naming every device of the StatefulSet `service` (pods named after it)."""
    for what, name in (("service", service), ("namespace", namespace)):
        if name is not None and not (DNS_LABEL.fullmatch(name) and len(name) <= 63):
            raise ValueError(f"the {what} {name!r} is not a DNS label (lower-case letters, digits, '-'; 63 at most)")
    if replicas < 1 or devices_per_pod < 1:
        raise ValueError(f"replicas ({replicas}) and devices per pod ({devices_per_pod}) must be at least 1")
    if replicas * devices_per_pod > MAX_DEVICES:
        raise ValueError(f"{replicas} x {devices_per_pod} devices: a program can use {MAX_DEVICES} at most")
    if not 0 < port < 65536:
        raise ValueError(f"port {port} is not a TCP port")
    domain = f".{namespace}.svc.{cluster_domain}" if namespace else ""
    scheme = "wss" if tls else "ws"
    return ",".join(
        f"{k}={scheme}://{service}-{k // devices_per_pod}.{service}{domain}:{port}/{k % devices_per_pod}"
        for k in range(replicas * devices_per_pod)
    )
