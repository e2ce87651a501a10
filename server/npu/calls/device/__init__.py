"""Device, ACL context, device-query and peer-access calls."""
