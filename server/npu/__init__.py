"""The virtual NPU: devices, memory, streams, events and aclnn kernels as a plain asyncio library.

No HTTP here (a test enforces it): everything runs under `asyncio.run`, and the daemon (`server.api`) only
decodes calls, invokes `Runtime` methods by their C names and encodes the results.
"""

from server.npu.device import Device
from server.npu.machine import Machine
from server.npu.runtime import Runtime

__all__ = ["Device", "Machine", "Runtime"]
