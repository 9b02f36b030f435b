#ifndef FUZZ_STUBS_H
#define FUZZ_STUBS_H
#include <setjmp.h>
extern sigjmp_buf fuzz_jmp;
extern const char *fuzz_external_body;
extern size_t fuzz_external_len;
extern void fuzz_arena_reset(void);
extern const void *fuzz_dict_lookup(int32 dict_id, int codec_id);
#endif
