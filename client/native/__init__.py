"""The native toolkit: CANN's libraries as C, no interpreter inside the program (issue 38).

`src/` is the hand-written core (the wire, the session, host objects and phase 1, pinned memory, the embedded
daemon, the few functions that are not one call); `codegen.py` generates the marshalling of every other
function from the prototype table and the call table (`plan.py` decides what each becomes, `callgen.py`,
`opgen.py` and `hostgen.py` write it), with `annotations.py` where the types do not say enough;
`build.py` compiles both with this machine's C compiler into a directory shaped like an installed CANN package.
"""
