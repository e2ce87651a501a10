"""The vnpu client: the ACL C calls under their exact names, over the network (`client.acl`, coming next)."""
