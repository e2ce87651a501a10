"""The daemon's network layer: it decodes calls, invokes the device's `Runtime` by C name, encodes results.

`settings` (VNPU_* configuration), `sessions` (contexts, sessions, tenants), `dispatch` (the one path every call
takes, from any transport), `rest` and `ws` (the transports), `views` (read-only resource pages), `app` (the
ASGI application and its lifespan, which owns the device).
"""
