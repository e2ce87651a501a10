"""Peer access between the virtual devices (spec-breadth 13). They share the daemon's memory, so every device can
reach every other one; enabling records the grant the runtime asks programs to make (one direction, from the
current device), and disabling takes it back."""

from __future__ import annotations

from proto.errors import ACL_ERROR_FEATURE_UNSUPPORTED, ACL_ERROR_RT_INVALID_DEVICEID, AclError
from server.npu.area import Area, acl_call, require


class PeerCalls(Area):
    @acl_call
    def aclrtDeviceCanAccessPeer(self, device_id: int, peer_device_id: int) -> int:
        require(device_id != peer_device_id, f"deviceId and peerDeviceId are both {device_id}: a device is no peer")
        self._device_index(device_id, "deviceId")
        self._device_index(peer_device_id, "peerDeviceId")
        return 1

    @acl_call
    def aclrtDeviceEnablePeerAccess(self, peer_device_id: int, flags: int) -> None:
        if flags != 0:
            raise AclError(ACL_ERROR_FEATURE_UNSUPPORTED, f"flags must be 0, got {flags}")
        current = self._peer_of_current(peer_device_id)
        self.ctx.peer_access.add((current, peer_device_id))

    @acl_call
    def aclrtDeviceDisablePeerAccess(self, peer_device_id: int) -> None:
        self.ctx.peer_access.discard((self._peer_of_current(peer_device_id), peer_device_id))

    def _peer_of_current(self, peer: int) -> int:
        current = self.ctx.device().index
        require(current != peer, f"peerDeviceId {peer} is this thread's current device")
        self._device_index(peer, "peerDeviceId")
        return current

    def _device_index(self, index: int, name: str) -> None:
        if not 0 <= index < len(self.machine.devices):
            raise AclError(
                ACL_ERROR_RT_INVALID_DEVICEID, f"{name} {index} is not a device (there are {len(self.machine.devices)})"
            )
