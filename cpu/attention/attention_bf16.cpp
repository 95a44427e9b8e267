// The attention engine's kernel over BF16 K/V rows (cpu/attention/attention_elem.inc).
#define TS_ATTEND_ELEM hwy::bfloat16_t
#define TS_ATTEND_FN AttendBF16
#define TS_ATTEND_ENTRY attend_bf16
#include "cpu/attention/attention_elem.inc"
