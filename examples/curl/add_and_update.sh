#!/usr/bin/env bash
# aclnnAdd, then a captured model whose kernel a task update rewrites, with curl (and jq) alone:
#   out = x + alpha * y, eagerly (alpha 1), then as a task group replayed before and after an update (alpha 2).
# Run against a daemon: `vnpu serve &` then `bash examples/curl/add_and_update.sh` (VNPU_ENDPOINT to point elsewhere).
set -euo pipefail
V=${VNPU_ENDPOINT:-http://127.0.0.1:9470}
S=$(curl -sS -X POST "$V/v1/sessions" | jq -r .session)   # a session of our own: its context, its handles
call() { curl -sS --fail-with-body -X POST "$V/v1/call/$1" -H "X-Vnpu-Session: $S" -d "${2:-{\}}"; }
floats() { for _ in $(seq 16); do printf "$1"; done | base64 -w0; }   # 16 float32 values as base64
tensor() { echo "{\"view_dims\":[16],\"data_type\":\"ACL_FLOAT\",\"strides\":[1],\"offset\":0,\"format\":\"ACL_FORMAT_ND\",\"storage_dims\":[16],\"data\":$1}"; }
add() {  # phase 1 over REST: the executor of out = x + alpha * y
  curl -sS --fail-with-body -X POST "$V/v1/aclnn/aclnnAddGetWorkspaceSize" -d "{\"self\":$(tensor "$X"),
    \"other\":$(tensor "$Y"),\"alpha\":{\"value\":$1,\"data_type\":\"ACL_FLOAT\"},\"out\":$(tensor "$OUT")}" | jq -c .executor
}
launch() { call aclnnAdd "{\"workspace\":0,\"workspaceSize\":0,\"executor\":$1,\"stream\":$2}" >/dev/null; }
show() { curl -sS --fail-with-body "$V/v1/memory/$OUT?count=64" -H "X-Vnpu-Session: $S" | od -An -tf4 -w64 | tr -s ' ' | sed "s/^ */$1: /"; }

call aclInit >/dev/null
call aclrtSetDevice '{"deviceId": 0}' >/dev/null
X=$(call aclrtMalloc '{"size": 64, "policy": 0}' | jq .devPtr)
Y=$(call aclrtMalloc '{"size": 64, "policy": 0}' | jq .devPtr)
OUT=$(call aclrtMalloc '{"size": 64, "policy": 0}' | jq .devPtr)
call aclrtMemcpy "{\"dst\":$X,\"destMax\":64,\"src\":\"$(floats '\x00\x00\x80\x3f')\",\"count\":64,\"kind\":1}" >/dev/null
call aclrtMemcpy "{\"dst\":$Y,\"destMax\":64,\"src\":\"$(floats '\x00\x00\x00\x40')\",\"count\":64,\"kind\":1}" >/dev/null
STREAM=$(call aclrtCreateStream | jq .stream)
UPDATE=$(call aclrtCreateStream | jq .stream)

launch "$(add 1.0)" "$STREAM"                              # eager: 1 + 1 * 2
call aclrtSynchronizeStream "{\"stream\":$STREAM}" >/dev/null
show eager

call aclmdlRICaptureBegin "{\"stream\":$STREAM,\"mode\":0}" >/dev/null
call aclmdlRICaptureTaskGrpBegin "{\"stream\":$STREAM}" >/dev/null
launch "$(add 1.0)" "$STREAM"                              # captured, not run
GROUP=$(call aclmdlRICaptureTaskGrpEnd "{\"stream\":$STREAM}" | jq .handle)
MODEL=$(call aclmdlRICaptureEnd "{\"stream\":$STREAM}" | jq .modelRI)
call aclrtMemset "{\"devPtr\":$OUT,\"maxCount\":64,\"value\":0,\"count\":64}" >/dev/null
call aclmdlRIExecuteAsync "{\"modelRI\":$MODEL,\"stream\":$STREAM}" >/dev/null
call aclrtSynchronizeStream "{\"stream\":$STREAM}" >/dev/null
show replay

call aclmdlRICaptureTaskUpdateBegin "{\"stream\":$UPDATE,\"handle\":$GROUP}" >/dev/null
launch "$(add 2.0)" "$UPDATE"                              # the group's kernel, rewritten: 1 + 2 * 2
call aclmdlRICaptureTaskUpdateEnd "{\"stream\":$UPDATE}" >/dev/null
call aclmdlRIExecuteAsync "{\"modelRI\":$MODEL,\"stream\":$UPDATE}" >/dev/null
call aclrtSynchronizeStream "{\"stream\":$UPDATE}" >/dev/null
show updated

curl -sS "$V/v1/models/$MODEL" -H "X-Vnpu-Session: $S" | jq -r '"model \(.handle): \(.executions) execution(s), group updates \(.groups[0].updates)"'
curl -sS -X DELETE "$V/v1/sessions/$S"
