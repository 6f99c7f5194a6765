# The CMake package that `cmake --install` writes to <prefix>/lib/cmake/stalesgd/, so that another
# project's find_package(stalesgd) gives the target stalesgd::core (docs/install.md). The library
# and the binary install themselves in src/ and tools/.
include(CMakePackageConfigHelpers)

set(STALESGD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/stalesgd)
install(EXPORT stalesgdTargets NAMESPACE stalesgd:: DESTINATION ${STALESGD_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/stalesgdConfig.cmake.in
  ${PROJECT_BINARY_DIR}/stalesgdConfig.cmake INSTALL_DESTINATION ${STALESGD_CMAKE_DIR})
# 0.x: a minor version may break the API, so only the same 0.y satisfies a request.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/stalesgdConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/stalesgdConfig.cmake
              ${PROJECT_BINARY_DIR}/stalesgdConfigVersion.cmake
        DESTINATION ${STALESGD_CMAKE_DIR})
