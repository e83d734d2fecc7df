# `cmake --install` and `cpack -G DEB`: the binary, the srun wrapper, the worker shims, the
# configs, a man page and bash completion — a relocatable layout: ddplaunch finds its shims
# relative to itself (launcher/shim_paths.h), so a prefix can be moved or copied elsewhere.
#   <prefix>/bin/ddplaunch, bin/ddplaunch-srun
#   <prefix>/lib/ddplaunch/libddplaunch_nccl_preload.so
#   <prefix>/share/ddplaunch/python/{ddplaunch_shim.py, ddplaunch_wait.py, autoload/sitecustomize.py}
#   <prefix>/share/ddplaunch/configs/, share/man/man1/ddplaunch.1,
#   share/bash-completion/completions/ddplaunch
find_package(Python3 REQUIRED COMPONENTS Interpreter)

# Man page and completion come from the option table, through the ddplaunch just built:
# `ddplaunch --man` writes the page (flags and every config key), launcher/tools/make-man the
# completion from `ddplaunch --help`. Never out of date, never checked in.
set(DDPLAUNCH_MAN ${CMAKE_BINARY_DIR}/ddplaunch.1)
set(DDPLAUNCH_COMPLETION ${CMAKE_BINARY_DIR}/ddplaunch.bash-completion)
add_custom_command(OUTPUT ${DDPLAUNCH_MAN} ${DDPLAUNCH_COMPLETION}
  COMMAND sh -c "\"$1\" --man > \"$2\"" sh $<TARGET_FILE:ddplaunch> ${DDPLAUNCH_MAN}
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/launcher/tools/make-man $<TARGET_FILE:ddplaunch> completion
          ${DDPLAUNCH_COMPLETION}
  DEPENDS ddplaunch ${PROJECT_SOURCE_DIR}/launcher/tools/make-man
  VERBATIM
  COMMENT "man page (ddplaunch --man) and bash completion (from ddplaunch --help)")
add_custom_target(ddplaunch_docs ALL DEPENDS ${DDPLAUNCH_MAN} ${DDPLAUNCH_COMPLETION})

install(TARGETS ddplaunch RUNTIME DESTINATION bin)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/launcher/tools/ddplaunch-srun DESTINATION bin)
install(TARGETS ddplaunch_nccl_preload LIBRARY DESTINATION lib/ddplaunch)
install(FILES ${PROJECT_SOURCE_DIR}/worker_shim/python/ddplaunch_shim.py ${PROJECT_SOURCE_DIR}/worker_shim/python/ddplaunch_wait.py
        DESTINATION share/ddplaunch/python)
install(FILES ${PROJECT_SOURCE_DIR}/worker_shim/python/autoload/sitecustomize.py
        DESTINATION share/ddplaunch/python/autoload)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION share/ddplaunch/configs)
install(FILES ${DDPLAUNCH_MAN} DESTINATION share/man/man1)
install(FILES ${DDPLAUNCH_COMPLETION} DESTINATION share/bash-completion/completions RENAME ddplaunch)

# cpack -G DEB: dependencies from the binaries themselves (dpkg-shlibdeps), plus python3
# for the Python shim.
set(CPACK_PACKAGE_NAME ddplaunch)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "ddplaunch developers <ddplaunch@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "per-node launcher for distributed PyTorch (replaces torchrun)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
include(CPack)
