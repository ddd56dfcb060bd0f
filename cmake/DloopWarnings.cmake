# Compiler flags shared by every dloop target: warnings, sanitizers, CPU features.
add_library(dloop_options INTERFACE)
target_compile_options(dloop_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-missing-field-initializers>)
if(DLOOP_SANITIZE)
  target_compile_options(dloop_options INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                         -fno-sanitize-recover=undefined)
  target_link_options(dloop_options INTERFACE -fsanitize=address,undefined)
endif()
