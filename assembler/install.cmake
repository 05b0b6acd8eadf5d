# What rootasm installs, and the Debian packages made of it (CPack).
#
#   cmake --install build [--prefix /usr/local]      # GNUInstallDirs paths
#   cmake -S . -B build/pkg -DCMAKE_INSTALL_PREFIX=/usr && cmake --build build/pkg &&
#     (cd build/pkg && cpack)                        # rootasm, librootasm0, librootasm-dev
#
# Components, one package each:
#   tool  rootasm         bin/rootasm, rootasm(1), bin/rootasm-runtime (static-pie) and
#                         bin/rootasm-runtime-full, rootasm-runtime(1),
#                         rootasm.layout(5), bash completion,
#                         share/rootasm/layout.schema.json; sbin/rootasmd, rootasmd(8), its
#                         systemd units (lib/systemd/system), share/doc/rootasm/{PROTOCOL.md,
#                         rootasmd.policy.example}
#   lib   librootasm0     lib/librootasm.so.0 and .so.0.x.y
#   dev   librootasm-dev  include/rootasm.h, lib/librootasm.so, lib/pkgconfig/rootasm.pc,
#                         librootasm(3)

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
  foreach(_page rootasm.1 rootasm-runtime.1 rootasmd.8 librootasm.3 rootasm.layout.5)
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
  # rootasm-runtime-full(1): the same page (a link, installed as one)
  file(CREATE_LINK rootasm-runtime.1.gz ${_man}/rootasm-runtime-full.1.gz SYMBOLIC)
  install(FILES ${_man}/rootasm.1.gz ${_man}/rootasm-runtime.1.gz ${_man}/rootasm-runtime-full.1.gz
          DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tool)
  install(FILES ${_man}/rootasm.layout.5.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man5 COMPONENT tool)
  install(FILES ${_man}/rootasmd.8.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man8 COMPONENT tool)
  install(FILES ${_man}/librootasm.3.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man3 COMPONENT dev)
endif()

# ---------------------------------------------------------------- pkg-config
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(ROOTASM_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(ROOTASM_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(ROOTASM_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(ROOTASM_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# written at install time: the prefix is the one installed to (cmake --install --prefix, CPack)
install(CODE "
  set(ROOTASM_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(ROOTASM_PC_LIBDIR [==[${ROOTASM_PC_LIBDIR}]==])
  set(ROOTASM_PC_INCLUDEDIR [==[${ROOTASM_PC_INCLUDEDIR}]==])
  set(PROJECT_VERSION ${PROJECT_VERSION})
  configure_file(${CMAKE_SOURCE_DIR}/assembler/lib/rootasm.pc.in ${CMAKE_BINARY_DIR}/pc/rootasm.pc @ONLY)
  " COMPONENT dev)

# ---------------------------------------------------------------- install
# (rootasm-runtime finds rootasm-runtime-full beside itself: the same directory)
install(TARGETS rootasm-cli rootasm-runtime rootasm-runtime-full RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        COMPONENT tool)
install(TARGETS rootasm
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib NAMELINK_COMPONENT dev)
install(FILES ${CMAKE_SOURCE_DIR}/assembler/include/rootasm.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(FILES ${CMAKE_BINARY_DIR}/pc/rootasm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
install(FILES ${CMAKE_SOURCE_DIR}/assembler/completion/rootasm.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME rootasm COMPONENT tool)
install(FILES ${CMAKE_SOURCE_DIR}/layouts/layout.schema.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/rootasm COMPONENT tool)
# rootasmd: the daemon, its socket-activated systemd units, its protocol and an example policy.
# The service's ExecStart names the sbin directory of the prefix installed to (as rootasm.pc does).
set(ROOTASM_SYSTEMD_UNITDIR "lib/systemd/system" CACHE STRING
    "systemd system unit directory (relative: under the prefix)")
install(TARGETS rootasmd RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR} COMPONENT tool)
# (its build-tree RUNPATH is its own, not CMake's: CMakeLists.txt; removed here as CMake's would be)
install(CODE "
  if(IS_ABSOLUTE [==[${CMAKE_INSTALL_SBINDIR}]==])
    set(ROOTASM_SBINDIR [==[${CMAKE_INSTALL_SBINDIR}]==])
  else()
    set(ROOTASM_SBINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SBINDIR}\")
  endif()
  file(RPATH_REMOVE FILE \"\$ENV{DESTDIR}\${ROOTASM_SBINDIR}/rootasmd\")
  configure_file(${CMAKE_SOURCE_DIR}/assembler/daemon/rootasmd.service.in ${CMAKE_BINARY_DIR}/systemd/rootasmd.service @ONLY)
  " COMPONENT tool)
install(FILES ${CMAKE_BINARY_DIR}/systemd/rootasmd.service ${CMAKE_SOURCE_DIR}/assembler/daemon/rootasmd.socket
        DESTINATION ${ROOTASM_SYSTEMD_UNITDIR} COMPONENT tool)
install(FILES ${CMAKE_SOURCE_DIR}/assembler/daemon/PROTOCOL.md ${CMAKE_SOURCE_DIR}/assembler/daemon/rootasmd.policy.example
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT tool)
# ---------------------------------------------------------------- Debian
# What Debian wants in every package besides the files (only in the packages: a
# component install): the copyright (DEP-5) and the changelog (assembler/debian/
# changelog, whose first entry must be this version; a native package's
# changelog is changelog.gz).
set(_deb ${CMAKE_SOURCE_DIR}/assembler/debian)
file(STRINGS ${_deb}/changelog _top LIMIT_COUNT 1)
if(NOT _top MATCHES "^rootasm \\(${PROJECT_VERSION}\\) ")
  message(FATAL_ERROR "assembler/debian/changelog starts with '${_top}', not an entry for ${PROJECT_VERSION}")
endif()
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/debian/changelog.gz
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/debian
  COMMAND sh -c "gzip -9nc \"$0\" >\"$1.tmp\" && mv \"$1.tmp\" \"$1\"" ${_deb}/changelog
          ${CMAKE_BINARY_DIR}/debian/changelog.gz
  DEPENDS ${_deb}/changelog VERBATIM)
# librootasm0's symbols file, from the version script (every symbol with the version it came in)
set(ROOTASM_DEB_LIB librootasm${PROJECT_VERSION_MAJOR})
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/debian/symbols
  COMMAND ${CMAKE_COMMAND} -DMAP=${ROOTASM_MAP} -DSONAME=librootasm.so.${PROJECT_VERSION_MAJOR}
          -DPACKAGE=${ROOTASM_DEB_LIB} -DDEV=librootasm-dev -DOUT=${CMAKE_BINARY_DIR}/debian/symbols
          -P ${_deb}/symbols.cmake
  DEPENDS ${ROOTASM_MAP} ${_deb}/symbols.cmake VERBATIM)
add_custom_target(debian-files ALL DEPENDS ${CMAKE_BINARY_DIR}/debian/changelog.gz ${CMAKE_BINARY_DIR}/debian/symbols)
foreach(_c tool:rootasm lib:${ROOTASM_DEB_LIB} dev:librootasm-dev)
  string(REPLACE ":" ";" _c "${_c}")
  list(GET _c 0 _comp)
  list(GET _c 1 _pkg)
  install(FILES ${CMAKE_SOURCE_DIR}/assembler/copyright ${CMAKE_BINARY_DIR}/debian/changelog.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${_pkg} COMPONENT ${_comp} EXCLUDE_FROM_ALL)
endforeach()
# (rootasm-runtime is static-pie: the tags that says so, overridden with the reason)
install(FILES ${_deb}/rootasm/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides
        RENAME rootasm COMPONENT tool EXCLUDE_FROM_ALL)

# ---------------------------------------------------------------- CPack: .deb
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rootasm)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "rootasm")
set(_contact "rootasm maintainers <maintainers@users.noreply.a-seed-dca9cd9b.example>")
set(ROOTASM_PACKAGE_CONTACT "${_contact}" CACHE STRING "The Maintainer field of the .deb packages")
if(ROOTASM_PACKAGE_CONTACT MATCHES "@localhost>$")	# the old default of a build tree made before
  set(ROOTASM_PACKAGE_CONTACT "${_contact}" CACHE STRING "The Maintainer field of the .deb packages" FORCE)
endif()
set(CPACK_PACKAGE_CONTACT "${ROOTASM_PACKAGE_CONTACT}")
# the packages' paths are the configured prefix's (rootasm.pc says the same)
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL tool lib dev)
set(CPACK_COMPONENTS_GROUPING IGNORE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Depends from the ELF files (dpkg-shlibdeps: jansson (rootasmd, rootasm-runtime-full; the
# rootasm command dlopen()s it; rootasm-runtime, static-pie, carries libjansson, libyaml and
# libc's code), libc); libyaml (dlopen()ed by
# the first layout parse), libarchive and libcrypto (by `rootasm import`) are named below
# (librootasm.so.0 itself is found in the build tree; its Depends is the explicit one below)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR})
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# CPack's own ldconfig postinst/postrm of the library package, replaced by its trigger
set(CPACK_DEBIAN_ROOTASM_LDCONFIG_PACKAGE ${ROOTASM_DEB_LIB})
set(CPACK_POST_BUILD_SCRIPTS ${_deb}/cpack-post.cmake)

set(CPACK_DEBIAN_TOOL_PACKAGE_NAME rootasm)
set(CPACK_DEBIAN_TOOL_PACKAGE_SECTION admin)
# init-system-helpers: deb-systemd-helper in the postinst (rootasmd.socket enabled on install)
set(CPACK_DEBIAN_TOOL_PACKAGE_DEPENDS "${ROOTASM_DEB_LIB} (= ${PROJECT_VERSION}), init-system-helpers (>= 1.54~)")
# import makes erofs layer images by default (mkfs.erofs), squashfs ones with --fs squashfs
# (mksquashfs); a runtime runs what bundle prepares; skopeo/umoci make the OCI layouts import reads
set(CPACK_DEBIAN_TOOL_PACKAGE_RECOMMENDS "erofs-utils | squashfs-tools")
set(CPACK_DEBIAN_TOOL_PACKAGE_SUGGESTS "crun | runc, skopeo, umoci")
set(CPACK_DEBIAN_TOOL_PACKAGE_CONTROL_EXTRA ${_deb}/rootasm/postinst ${_deb}/rootasm/prerm ${_deb}/rootasm/postrm)
set(CPACK_DEBIAN_TOOL_DESCRIPTION "assemble container root filesystems out of detached mounts
rootasm reads a layout (layers, an upper, an overlay credential, volumes)
and builds the whole tree out of detached mounts with the Linux 6.15 mount
API, then attaches it with one move_mount, hands its fd to a runtime, or
runs a command in it. Nothing is visible in any mount namespace until the
tree is complete.

It imports OCI image layouts into a store of erofs or squashfs layer
images and prepares OCI runtime bundles for crun or runc; rootasm-runtime,
an OCI runtime that delegates to crun or runc, gives podman's and
containerd's containers the tree an annotation chooses. rootasmd, a
socket-activated service, keeps one mount per image for the whole node.")

set(CPACK_DEBIAN_LIB_PACKAGE_NAME ${ROOTASM_DEB_LIB})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
# dlopen()ed by a layout parse (yaml.c) and an import (unpack.c, digest.c): dpkg-shlibdeps
# cannot see them
set(CPACK_DEBIAN_LIB_PACKAGE_DEPENDS "libyaml-0-2 (>= 0.2.5), libarchive13 (>= 3.6), libssl3 (>= 3.0)")
# dlopen()ed by an import of a docker:// reference only (oci/registry.c); 7.85: CURLOPT_PROTOCOLS_STR
set(CPACK_DEBIAN_LIB_PACKAGE_RECOMMENDS "libcurl4 (>= 7.85)")
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA ${_deb}/librootasm0/triggers ${CMAKE_BINARY_DIR}/debian/symbols)
set(CPACK_DEBIAN_LIB_DESCRIPTION "assemble container root filesystems out of detached mounts - library
librootasm assembles a container's root filesystem from a layout entirely
out of detached mounts and returns the tree's fd to the calling runtime.

This package holds the shared library.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME librootasm-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${ROOTASM_DEB_LIB} (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "rootasm")
set(CPACK_DEBIAN_DEV_DESCRIPTION "assemble container root filesystems out of detached mounts - development files
librootasm assembles a container's root filesystem from a layout entirely
out of detached mounts and returns the tree's fd to the calling runtime.

This package holds the header, the pkg-config file and librootasm(3).")
include(CPack)
