# librootasm0's symbols file (deb-symbols(5)), made from the version script:
# every exported function and version node with the release that brought it,
# the node's: LIBROOTASM_X.Y's at X.Y.0. dpkg-shlibdeps then gives a program
# that links librootasm the lowest version that has what it uses.
#
#   cmake -DMAP=librootasm.map -DSONAME=librootasm.so.0 -DPACKAGE=librootasm0
#         -DDEV=librootasm-dev -DOUT=symbols -P symbols.cmake
foreach(_v MAP SONAME PACKAGE DEV OUT)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "symbols.cmake: -D${_v}= is missing")
  endif()
endforeach()
file(READ "${MAP}" _map)
string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" _map "${_map}")   # comments
string(REPLACE ";" "," _map "${_map}")     # (a CMake list separator)
string(REGEX MATCHALL "LIBROOTASM_[0-9]+\\.[0-9]+[ \t\n]*{[^}]*}" _nodes "${_map}")
if(NOT _nodes)
  message(FATAL_ERROR "symbols.cmake: no version node in ${MAP}")
endif()
set(_lines)
foreach(_node IN LISTS _nodes)
  string(REGEX MATCH "^LIBROOTASM_([0-9]+\\.[0-9]+)" _name "${_node}")
  set(_ver "${CMAKE_MATCH_1}.0")
  list(APPEND _lines " LIBROOTASM_${CMAKE_MATCH_1}@LIBROOTASM_${CMAKE_MATCH_1} ${_ver}")
  string(REGEX REPLACE "^[^{]*{(.*)}$" "\\1" _body "${_node}")
  if(_body MATCHES "local:")
    string(REGEX REPLACE "local:.*" "" _body "${_body}")
  endif()
  string(REGEX MATCHALL "[A-Za-z_][A-Za-z0-9_]*[ \t]*," _syms "${_body}")
  foreach(_s IN LISTS _syms)
    string(REGEX REPLACE "[ \t,]" "" _s "${_s}")
    list(APPEND _lines " ${_s}@${_name} ${_ver}")
  endforeach()
endforeach()
list(SORT _lines)
list(JOIN _lines "\n" _body)
file(WRITE "${OUT}.tmp" "${SONAME} ${PACKAGE} #MINVER#\n* Build-Depends-Package: ${DEV}\n${_body}\n")
file(RENAME "${OUT}.tmp" "${OUT}")
