# vnpu's ascendc.cmake (found through ASCENDC_CMAKE_DIR, which setenv.bash sets): the Ascend C build functions of
# CANN's samples, without the Ascend C compiler. Device code is never compiled: `client.capi.ascendc` keeps each
# source's host wrappers, turns their `Name<<<...>>>(args...)` launches into vnpuLaunchKernel("Name", ...) stubs,
# and the kernel runs as its numpy implementation in the daemon (docs/kernels.md).
get_filename_component(VNPU_TOOLKIT "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
file(STRINGS "${VNPU_TOOLKIT}/share/vnpu/python" VNPU_PYTHON LIMIT_COUNT 1)

# ascendc_library(<target> STATIC|SHARED <sources>...): the host wrappers of the kernel sources, carrying the
# runtime library as link interface, as the real target does.
function(ascendc_library target type)
    set(sources "")
    set(dirs "")
    foreach(source IN LISTS ARGN)
        get_filename_component(path "${source}" ABSOLUTE)
        get_filename_component(dir "${path}" DIRECTORY)
        list(APPEND sources "${path}")
        list(APPEND dirs "${dir}")
    endforeach()
    set(host "${CMAKE_CURRENT_BINARY_DIR}/vnpu_ascendc/${target}_host.cpp")
    add_custom_command(
        OUTPUT "${host}"
        COMMAND "${VNPU_PYTHON}" -m client.capi.ascendc stub "${host}" ${sources}
        DEPENDS ${sources}
        COMMENT "vnpu: host half of ${target} (device code runs as numpy)"
        VERBATIM)
    add_library(${target} ${type} "${host}")
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_include_directories(${target} PRIVATE ${dirs} "${VNPU_TOOLKIT}/include")
    target_link_libraries(${target} PUBLIC "${VNPU_TOOLKIT}/lib64/libascendcl.so")
endfunction()

# ascendc_fatbin_library(<target> <sources>...): a kernel binary aclrtBinaryLoadFromFile accepts, at
# ${CMAKE_INSTALL_PREFIX}/fatbin/<target>/<target>.o (the samples' ./out/fatbin/...), written at build time.
function(ascendc_fatbin_library target)
    set(sources "")
    foreach(source IN LISTS ARGN)
        get_filename_component(path "${source}" ABSOLUTE)
        list(APPEND sources "${path}")
    endforeach()
    set(binary "${CMAKE_INSTALL_PREFIX}/fatbin/${target}/${target}.o")
    add_custom_command(
        OUTPUT "${binary}"
        COMMAND "${VNPU_PYTHON}" -m client.capi.ascendc fatbin "${binary}" ${sources}
        DEPENDS ${sources}
        COMMENT "vnpu: kernel binary ${target}"
        VERBATIM)
    add_custom_target(${target} ALL DEPENDS "${binary}")
endfunction()
