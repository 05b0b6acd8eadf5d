# CPACK_POST_BUILD_SCRIPTS: CPack (3.25) gives a package that holds a shared
# library under /usr/lib a postinst and a postrm that run ldconfig, and has no
# setting to leave them out. Debian wants the ldconfig trigger instead
# (librootasm0's `triggers` file, lintian's maintscript-calls-ldconfig), so
# they are taken out of that package here, after checking that they are
# exactly CPack's, and the package is put together again with dpkg-deb.
# Every other package is left as CPack made it.
if(NOT CPACK_DEBIAN_ROOTASM_LDCONFIG_PACKAGE)
  return()
endif()
find_program(_dpkg_deb dpkg-deb REQUIRED)
foreach(_deb IN LISTS CPACK_PACKAGE_FILES)
  get_filename_component(_name "${_deb}" NAME)
  if(NOT _name MATCHES "^${CPACK_DEBIAN_ROOTASM_LDCONFIG_PACKAGE}_.*\\.deb$")
    continue()
  endif()
  set(_dir "${_deb}.d")
  file(REMOVE_RECURSE "${_dir}")
  execute_process(COMMAND ${_dpkg_deb} -R "${_deb}" "${_dir}" RESULT_VARIABLE _r)
  if(_r)
    message(FATAL_ERROR "dpkg-deb -R ${_deb} failed")
  endif()
  foreach(_script postinst postrm)
    set(_f "${_dir}/DEBIAN/${_script}")
    if(EXISTS "${_f}")
      file(READ "${_f}" _text)
      # CPack's: a shebang, set -e, and ldconfig for configure or remove; nothing else
      string(REGEX REPLACE "#![^\n]*\n|set -e|if \\[ \"\\$1\" = \"(configure|remove)\" \\]; then|ldconfig|fi|[ \t\n]" "" _rest "${_text}")
      if(NOT _rest STREQUAL "")
        message(FATAL_ERROR "${_name}: ${_script} is not CPack's ldconfig call, not removing it:\n${_text}")
      endif()
      file(REMOVE "${_f}")
    endif()
  endforeach()
  if(NOT EXISTS "${_dir}/DEBIAN/triggers")
    message(FATAL_ERROR "${_name}: no triggers file: the ldconfig calls are not replaced")
  endif()
  execute_process(COMMAND ${_dpkg_deb} --root-owner-group -Zxz -b "${_dir}" "${_deb}"
                  OUTPUT_QUIET RESULT_VARIABLE _r)
  if(_r)
    message(FATAL_ERROR "dpkg-deb -b ${_dir} failed")
  endif()
  file(REMOVE_RECURSE "${_dir}")
endforeach()
