// The attention engine's kernel over F16 K/V rows (cpu/attention/attention_elem.inc).
#define TS_ATTEND_ELEM hwy::float16_t
#define TS_ATTEND_FN AttendF16
#define TS_ATTEND_ENTRY attend_f16
#include "cpu/attention/attention_elem.inc"
