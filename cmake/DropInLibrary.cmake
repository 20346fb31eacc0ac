# Drop-in replacements for system libraries (the verbs shim's libibverbs.so.1,
# the CM shim's librdmacm.so.1): the same exports at the same versions as the
# installed library, each behind a generated entry point that runs the shim's
# own function, or the real library's in passthrough mode (RNICSIM_MODE=
# passthrough), and writes the call to the RNICSIM_TRACE trace when asked.
# The runtime side of that is drop_in/passthrough.cpp and drop_in/trace.cpp.

enable_language(ASM)
find_program(READELF_EXECUTABLE readelf REQUIRED)
find_program(OBJCOPY_EXECUTABLE objcopy REQUIRED)
set(RNICSIM_DROP_IN_DIR ${CMAKE_CURRENT_LIST_DIR}/../drop_in)

# rnicsim_drop_in_exports(LABEL text REAL_LIBRARY path MAP_FILE name HEADERS files...
#     [RETURNS_VOID names...] [RETURNS_INT names...] [RETURNS_POINTER names...]
#     [VOID_MATCHING regex] [INT_MATCHING regex] EXPORTS_VAR var)
#
# At configure time, from the exports of REAL_LIBRARY, writes into the current
# binary directory:
#   MAP_FILE              the version script: every default-version (@@) symbol
#                         of every version node, in definition order;
#   redefine_exports.txt  "NAME sim_NAME" per exported function (for objcopy);
#   trampolines.S         one entry point per exported function;
#   export_table.c        the names, return kinds and sim_NAME addresses, and
#                         the table passthrough fills with the real ones.
# and sets EXPORTS_VAR to the exported names (functions and objects), in order.
#
# What each function returns, for the trace (which prints the value as that
# type): v void, i a 32-bit integer or enum, h a 16-bit integer, p a pointer, l
# a 64-bit integer. It is read off the declarations in HEADERS; the RETURNS_*
# lists and *_MATCHING patterns name the exports none of them declares.
function(rnicsim_drop_in_exports)
  cmake_parse_arguments(D "" "LABEL;REAL_LIBRARY;MAP_FILE;VOID_MATCHING;INT_MATCHING;EXPORTS_VAR"
                        "HEADERS;RETURNS_VOID;RETURNS_INT;RETURNS_POINTER" ${ARGN})
  set(_lib ${D_REAL_LIBRARY})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_lib})
  execute_process(COMMAND ${READELF_EXECUTABLE} -V -W ${_lib} OUTPUT_VARIABLE _versions RESULT_VARIABLE _rc)
  execute_process(COMMAND ${READELF_EXECUTABLE} --dyn-syms -W ${_lib} OUTPUT_VARIABLE _syms RESULT_VARIABLE _rc2)
  if(NOT _rc EQUAL 0 OR NOT _rc2 EQUAL 0)
    message(FATAL_ERROR "readelf could not read ${_lib}")
  endif()

  set(_decls "")
  foreach(_h IN LISTS D_HEADERS)
    file(READ ${_h} _text)
    string(APPEND _decls "\n${_text}")
  endforeach()

  # Version nodes in definition order (the first definition is the file's own name).
  string(REGEX MATCHALL "Flags: none[ \t]+Index: [0-9]+[ \t]+Cnt: [0-9]+[ \t]+Name: [A-Za-z0-9_.]+" _defs "${_versions}")
  set(_nodes "")
  foreach(_d IN LISTS _defs)
    string(REGEX REPLACE ".*Name: " "" _n "${_d}")
    list(APPEND _nodes ${_n})
  endforeach()
  if(NOT _nodes)
    message(FATAL_ERROR "no version nodes found in ${_lib}")
  endif()

  # Defined default-version symbols: "... TYPE BIND VIS Ndx Name@@NODE".
  string(REGEX MATCHALL "(FUNC|OBJECT)[ \t]+[A-Z]+[ \t]+[A-Z]+[ \t]+[0-9]+ ([A-Za-z0-9_]+)@@([A-Za-z0-9_.]+)" _exports "${_syms}")
  set(_script "/* Generated from ${_lib}; do not edit. */\n")
  set(_all "")
  set(_count 0)
  set(_func_index 0)
  set(_redefine "")
  set(_trampolines "/* Generated; do not edit. One entry point per exported function. */\n  .text\n  .hidden rnicsim_passthrough\n  .hidden rnicsim_real\n  .hidden rnicsim_tracing\n  .hidden rnicsim_trace_call\n  .hidden rnicsim_trace_return\n")
  set(_names "")
  set(_kinds "")
  set(_impl_decls "")
  set(_impls "")
  list(LENGTH _nodes _node_count)
  set(_i 0)
  foreach(_node IN LISTS _nodes)
    math(EXPR _i "${_i} + 1")
    string(APPEND _script "${_node} {\n  global:\n")
    foreach(_e IN LISTS _exports)
      string(REGEX REPLACE "^([A-Z]+).*[ \t]([A-Za-z0-9_]+)@@([A-Za-z0-9_.]+)" "\\1;\\2;\\3" _pair "${_e}")
      list(GET _pair 0 _type)
      list(GET _pair 1 _sym)
      list(GET _pair 2 _snode)
      if(NOT _snode STREQUAL _node)
        continue()
      endif()
      string(APPEND _script "    ${_sym};\n")
      list(APPEND _all ${_sym})
      math(EXPR _count "${_count} + 1")
      if(NOT _type STREQUAL "FUNC")
        continue()
      endif()
      # Passthrough: the exported entry point jumps to the shim's own
      # implementation (renamed sim_NAME in the archive) or, in passthrough
      # mode, to the real library's function.
      string(APPEND _redefine "${_sym} sim_${_sym}\n")
      # With RNICSIM_TRACE, the call is written to the trace before it runs
      # (the argument registers kept across it; 7 pushes keep the stack
      # aligned), then called in place of the caller's return address (which
      # rnicsim_trace_call keeps on a stack of its own, so arguments on the
      # stack stay where the callee looks), and its return value and errno
      # are written when it returns to the caller.
      string(APPEND _trampolines "  .globl ${_sym}\n  .type ${_sym}, @function\n${_sym}:\n  cmpb $0, rnicsim_tracing(%rip)\n  jne 2f\n  cmpb $0, rnicsim_passthrough(%rip)\n  jne 1f\n  jmp sim_${_sym}@PLT\n1:\n  jmp *rnicsim_real+${_func_index}*8(%rip)\n2:\n  push %rdi\n  push %rsi\n  push %rdx\n  push %rcx\n  push %r8\n  push %r9\n  push %rax\n  mov $${_func_index}, %edi\n  mov 56(%rsp), %rsi\n  call rnicsim_trace_call@PLT\n  pop %rax\n  pop %r9\n  pop %r8\n  pop %rcx\n  pop %rdx\n  pop %rsi\n  pop %rdi\n  add $8, %rsp\n  cmpb $0, rnicsim_passthrough(%rip)\n  jne 3f\n  call sim_${_sym}@PLT\n  jmp 4f\n3:\n  call *rnicsim_real+${_func_index}*8(%rip)\n4:\n  push %rax\n  push %rdx\n  mov %rax, %rdi\n  call rnicsim_trace_return@PLT\n  mov %rax, %r11\n  pop %rdx\n  pop %rax\n  jmp *%r11\n  .size ${_sym}, .-${_sym}\n")

      set(_k l)
      if(_sym IN_LIST D_RETURNS_VOID OR (D_VOID_MATCHING AND _sym MATCHES "${D_VOID_MATCHING}"))
        set(_k v)
      elseif(_sym IN_LIST D_RETURNS_INT OR (D_INT_MATCHING AND _sym MATCHES "${D_INT_MATCHING}"))
        set(_k i)
      elseif(_sym IN_LIST D_RETURNS_POINTER)
        set(_k p)
      elseif(_decls MATCHES "\n([A-Za-z_][A-Za-z_0-9 ]*[ \t*]+)${_sym}[ \t]*\\(")
        string(STRIP "${CMAKE_MATCH_1}" _t)
        string(REGEX REPLACE "[ \t]*__attribute_const$" "" _t "${_t}")
        if(_t MATCHES "\\*$")
          set(_k p)
        elseif(_t MATCHES "(^|[ \t])void$")
          set(_k v)
        elseif(_t MATCHES "(^|[ \t])(int|enum [a-z_]+|unsigned int|uint32_t)$")
          set(_k i)
        elseif(_t MATCHES "(^|[ \t])(__be16|uint16_t|unsigned short)$")
          set(_k h)
        endif()
      else()
        message(FATAL_ERROR "${D_LABEL}: no declaration of ${_sym} in the installed headers; say what it returns")
      endif()
      string(APPEND _kinds "${_k}")
      string(APPEND _names "  \"${_sym}\",\n")
      string(APPEND _impl_decls "void sim_${_sym}(void);\n")
      string(APPEND _impls "  (void*)sim_${_sym},\n")
      math(EXPR _func_index "${_func_index} + 1")
    endforeach()
    if(_i EQUAL _node_count)
      string(APPEND _script "  local:\n    *;\n")
    endif()
    string(APPEND _script "};\n")
  endforeach()
  set(_dir ${CMAKE_CURRENT_BINARY_DIR})
  file(WRITE ${_dir}/${D_MAP_FILE} "${_script}")
  file(WRITE ${_dir}/redefine_exports.txt "${_redefine}")
  string(APPEND _trampolines "  .section .note.GNU-stack,\"\",@progbits\n")
  file(WRITE ${_dir}/trampolines.S "${_trampolines}")
  file(WRITE ${_dir}/export_table.c
    "/* Generated; do not edit. */\n#include <stddef.h>\n${_impl_decls}\n__attribute__((visibility(\"hidden\"))) const size_t rnicsim_export_count = ${_func_index};\n__attribute__((visibility(\"hidden\"))) const char* const rnicsim_export_names[] = {\n${_names}};\n__attribute__((visibility(\"hidden\"))) const char rnicsim_export_returns[] = \"${_kinds}\";\n__attribute__((visibility(\"hidden\"))) void* const rnicsim_export_impls[] = {\n${_impls}};\n__attribute__((visibility(\"hidden\"))) void* rnicsim_real[${_func_index}];\n")
  message(STATUS "${D_LABEL}: ${_count} exports in ${_node_count} version nodes from ${_lib}")
  set(${D_EXPORTS_VAR} ${_all} PARENT_SCOPE)
endfunction()

# rnicsim_add_drop_in_library(target IMPL impl OUTPUT_NAME name MAP_FILE name
#     REAL_LIBRARY path REAL_LIBRARY_ENV var [LINK_LIBRARIES libs...])
#
# The shared library lib<OUTPUT_NAME>.so.1 from the generated entry points and
# the static archive IMPL, whose exported names objcopy renames to sim_NAME
# (the archive gets the passthrough and trace runtime added here). In
# passthrough mode the real library is loaded from $REAL_LIBRARY_ENV, else
# from REAL_LIBRARY. Call after rnicsim_drop_in_exports, in the same directory.
function(rnicsim_add_drop_in_library target)
  cmake_parse_arguments(D "" "IMPL;OUTPUT_NAME;MAP_FILE;REAL_LIBRARY;REAL_LIBRARY_ENV" "LINK_LIBRARIES" ${ARGN})
  set(_dir ${CMAKE_CURRENT_BINARY_DIR})
  target_sources(${D_IMPL} PRIVATE ${RNICSIM_DROP_IN_DIR}/passthrough.cpp ${RNICSIM_DROP_IN_DIR}/trace.cpp)
  target_compile_definitions(${D_IMPL} PRIVATE RNICSIM_REAL_LIBRARY="${D_REAL_LIBRARY}"
                             RNICSIM_REAL_LIBRARY_ENV="${D_REAL_LIBRARY_ENV}")
  set(_renamed ${_dir}/lib${target}_renamed.a)
  add_custom_command(OUTPUT ${_renamed}
    COMMAND ${OBJCOPY_EXECUTABLE} --redefine-syms=${_dir}/redefine_exports.txt $<TARGET_FILE:${D_IMPL}> ${_renamed}
    DEPENDS ${D_IMPL} ${_dir}/redefine_exports.txt
    COMMENT "Renaming the exports of ${target} to sim_NAME")
  add_custom_target(${target}_renamed DEPENDS ${_renamed})

  add_library(${target} SHARED ${_dir}/trampolines.S ${_dir}/export_table.c)
  add_dependencies(${target} ${target}_renamed)
  # A library it links (the CM shim: the verbs shim) is found beside it.
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${D_OUTPUT_NAME} SOVERSION 1 LINKER_LANGUAGE CXX
    LINK_DEPENDS "${_dir}/${D_MAP_FILE};${_renamed}" BUILD_RPATH_USE_ORIGIN ON)
  target_link_options(${target} PRIVATE
    -Wl,--version-script=${_dir}/${D_MAP_FILE} -Wl,--no-undefined-version -Wl,-z,defs)
  target_link_libraries(${target} PRIVATE -Wl,--whole-archive ${_renamed} -Wl,--no-whole-archive
    ${D_LINK_LIBRARIES} pthread dl)

  # The library is loaded into other programs (perftest, pyverbs, ...), which
  # are not built with the sanitizers: a sanitized library would need its
  # runtime loaded first. It is built without them in the sanitizer build too.
  if(RNICSIM_SANITIZE)
    target_compile_options(${D_IMPL} PRIVATE -fno-sanitize=all)
    target_compile_options(${target} PRIVATE -fno-sanitize=all)
    target_link_options(${target} PRIVATE -fno-sanitize=all)
  endif()
endfunction()
