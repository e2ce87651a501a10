"""The C toolkit: CANN C/C++ programs built and run against vnpu unchanged.

`vnpu toolkit` lays out a directory shaped like an installed CANN package (`client.capi.toolkit`): the headers
under `include/` (authored in `client/capi/include/`, with the enums, flags and error codes of `proto` filled in
by `client.capi.headers`, and one `aclnnop/aclnn_<op>.h` per operator of `proto.aclnn`), and the three libraries
programs link (`libascendcl.so`, `libnnopbase.so`, `libopapi.so`) built with CFFI's embedding mode. Every C
function of those headers is one prototype (`client.capi.prototypes`); the libraries forward each call into the
Python client inside the program (`client.capi.bridge`), so there is one client, not two. A function vnpu does
not implement answers ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000) and says so in aclGetRecentErrMsg().
"""
