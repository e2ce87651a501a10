"""The C-named surface of the runtime: one area per part of it (`server.npu.area`), gathered by `server.npu.runtime`."""
