/* vnpu: model API. CANN's runtime package ships this header empty; vnpu keeps only the aclmdlRIBindStream
 * flags that programs use (documented in the aclmdlRIBindStream reference, absent from the runtime headers). */
#ifndef INC_EXTERNAL_ACL_ACL_MDL_H_
#define INC_EXTERNAL_ACL_ACL_MDL_H_

#ifdef __cplusplus
extern "C" {
#endif

/* vnpu: defines ACL_MODEL_STREAM_FLAG_* */

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_ACL_MDL_H_ */
