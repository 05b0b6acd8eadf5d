# The tool's end-to-end suite (tests/qemu/tool-suite) on the stock kernel: rootasm
# must stop before mounting anything, naming the missing feature. (On the patched
# kernel it runs as part of qemu-selftests-patched, through tests/qemu/suite.)
add_test(NAME qemu-tool-stock
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/run --kernel stock --timeout 600 -- tests/qemu/tool-suite)
set_tests_properties(qemu-tool-stock PROPERTIES LABELS "qemu" TIMEOUT 700 RUN_SERIAL TRUE)
