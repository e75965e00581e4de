/* Phrases the docstrings of the public calls share (Google style: Args,
 * Returns, Raises, Example), so that a call's arguments read the same in
 * every docstring. Each is a string literal, indented as an entry of an
 * Args or Raises section. */
#ifndef SYMMEM_EXTENSION_DOC_PARTS_H
#define SYMMEM_EXTENSION_DOC_PARTS_H

/* stream= of every call that takes one. */
#define SYMMEM__DOC_STREAM                                                                         \
    "    stream: None (the default): the call is complete when it returns. On\n"                   \
    "        the gpu backend, a CUDA stream to order the call on instead: an\n"                    \
    "        object with __cuda_stream__, .cuda_stream or .ptr (cuda.core,\n"                      \
    "        torch, CuPy), or the stream's handle as an int. The cpu backend\n"                    \
    "        has no streams: it completes the call either way.\n"

/* A team= argument. */
#define SYMMEM__DOC_TEAM                                                                           \
    "    team: a team handle: a Teams member (Teams.TEAM_WORLD, ...) or a team\n"                  \
    "        made by team_split_strided, team_split_2d or team_init.\n"

/* The start of a Raises section: NvshmemInvalid for the reasons why (its
 * own lines, without the final newline), and for those every call has. */
#define SYMMEM__DOC_INVALID(why)                                                                   \
    "Raises:\n"                                                                                    \
    "    NvshmemInvalid: " why "\n"                                                                \
    "        Also when symmem is not initialised, or an argument is missing,\n"                    \
    "        unexpected or of the wrong type.\n"

/* The NvshmemError entry of a blocking call (a wait, a barrier, a collective). */
#define SYMMEM__DOC_RAISES_WAIT                                                                    \
    "    NvshmemError: a PE it waits for died, SYMMEM_TIMEOUT seconds passed,\n"                   \
    "        or the backend failed. Ctrl-C raises KeyboardInterrupt.\n"

#define SYMMEM__DOC_RAISES_BACKEND                                                                 \
    "    NvshmemError: the backend failed (gpu: a CUDA or NVSHMEM error).\n"

#endif
