# infer_add_plugin(NAME SOURCES...)
# Builds a backend plugin as a MODULE library named libinfer_plugin_<NAME>.so in the
# plugin folder of the build tree, exporting exactly one symbol (infer_plugin_entry):
# everything else is hidden by the version script, so plugins never clash with each
# other or with the host.
function(infer_add_plugin name)
  set(target infer_plugin_${name})
  add_library(${target} MODULE ${ARGN})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "infer_plugin_${name}"
    LIBRARY_OUTPUT_DIRECTORY ${INFER_PLUGIN_OUTPUT_DIR}
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(${target} PRIVATE infer::sdk)
  target_link_options(${target} PRIVATE
    "-Wl,--version-script=${PROJECT_SOURCE_DIR}/sdk/plugin.map" ${INFER_MODULE_NO_UNDEFINED})
  install(TARGETS ${target} LIBRARY DESTINATION ${INFER_PLUGIN_INSTALL_DIR})
endfunction()
