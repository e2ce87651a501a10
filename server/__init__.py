"""The vnpu daemon: `server.npu` is the virtual device (plain asyncio), `server.api` puts it on the network."""
