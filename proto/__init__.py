"""The vocabulary that the vnpu device, daemon and client share: constants, error codes, operator declarations.

`proto` imports only the standard library and pydantic, never numpy, so the client can do host-side work
(aclnn phase 1) with the same rules as the device.
"""
