/* One trampoline per OpenSSL function of openssl_functions.h: a jump through its slot of
   ddplaunch_openssl_table (filled by openssl_loader.cpp before the first TLS call). The
   table is zero until then, in .bss: nothing to relocate at start. x86-64 only. */
#include "etcd/openssl_functions.h"

#define DDPLAUNCH_TRAMPOLINE(name) \
  .globl name; .type name, @function; name: jmp *(ddplaunch_openssl_table + 8 * __COUNTER__)(%rip); .size name, .-name;

        .text
        .hidden ddplaunch_openssl_table
DDPLAUNCH_OPENSSL_FUNCTIONS(DDPLAUNCH_TRAMPOLINE)

        .section .note.GNU-stack,"",@progbits
