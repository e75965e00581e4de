#include "state.h"

symmem_runtime_t symmem__rt = {.my_pe = -1, .n_pes = -1};
