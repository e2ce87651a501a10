"""The C toolkit's shared part: what CANN C/C++ programs see, whoever implements it.

`vnpu toolkit` lays out a directory shaped like an installed CANN package (`client.capi.toolkit`: the library
names, aliases and layout): the headers under `include/` (authored in `client/capi/include/`, with the enums, flags
and error codes of `proto` filled in by `client.capi.headers`; CANN's operator headers written from the catalog by
`client.capi.opheaders`), and the libraries, native C built by `client.native` from the prototype table these
headers make (`client.capi.prototypes`). A function vnpu does not implement answers
ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000) and says so in aclGetRecentErrMsg().
"""
