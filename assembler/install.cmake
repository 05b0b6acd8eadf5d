# What rootasm installs (components: tool, dev).

# ---------------------------------------------------------------- man pages
option(ROOTASM_MAN "Build the man pages (needs scdoc)" ON)
set(ROOTASM_MAN_PAGES)
if(ROOTASM_MAN)
  find_program(SCDOC scdoc REQUIRED)
  # Debian's python3 first: ci/deps installs the modules the tests use into it
  find_program(ROOTASM_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  find_program(ROOTASM_PYTHON3 NAMES python3 REQUIRED)
  set(_man ${CMAKE_BINARY_DIR}/man)
  file(MAKE_DIRECTORY ${_man})
  # rootasm.layout(5) is generated from layouts/FORMAT.md, the one source of the format
  add_custom_command(OUTPUT ${_man}/rootasm.layout.5.scd
    COMMAND ${ROOTASM_PYTHON3} ${CMAKE_SOURCE_DIR}/assembler/man/md2scd.py
            ${CMAKE_SOURCE_DIR}/layouts/FORMAT.md ${_man}/rootasm.layout.5.scd
    DEPENDS ${CMAKE_SOURCE_DIR}/assembler/man/md2scd.py ${CMAKE_SOURCE_DIR}/layouts/FORMAT.md
    COMMENT "Generating rootasm.layout.5.scd from layouts/FORMAT.md" VERBATIM)
  foreach(_page rootasm.1 librootasm.3 rootasm.layout.5)
    if(_page STREQUAL "rootasm.layout.5")
      set(_src ${_man}/${_page}.scd)
    else()
      set(_src ${CMAKE_SOURCE_DIR}/assembler/man/${_page}.scd)
    endif()
    # the page (tests read it with man -l), and gzip'ed as Debian installs man pages
    add_custom_command(OUTPUT ${_man}/${_page} ${_man}/${_page}.gz
      COMMAND sh -c "\"$0\" <\"$1\" >\"$2.tmp\" && mv \"$2.tmp\" \"$2\" && gzip -9nc \"$2\" >\"$2.gz\""
              ${SCDOC} ${_src} ${_man}/${_page}
      DEPENDS ${_src} COMMENT "scdoc ${_page}" VERBATIM)
    list(APPEND ROOTASM_MAN_PAGES ${_man}/${_page})
  endforeach()
  add_custom_target(man ALL DEPENDS ${ROOTASM_MAN_PAGES})
  install(FILES ${_man}/rootasm.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tool)
  install(FILES ${_man}/rootasm.layout.5.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man5 COMPONENT tool)
  install(FILES ${_man}/librootasm.3.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man3 COMPONENT dev)
endif()

# ---------------------------------------------------------------- install
install(FILES ${CMAKE_SOURCE_DIR}/assembler/completion/rootasm.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME rootasm COMPONENT tool)
