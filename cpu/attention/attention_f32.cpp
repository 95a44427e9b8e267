// The attention engine's kernel over F32 K/V rows, and over every layout it reads through F32 copies
// (cpu/attention/attention_elem.inc).
#define TS_ATTEND_ELEM float
#define TS_ATTEND_FN AttendF32
#define TS_ATTEND_ENTRY attend_f32
#include "cpu/attention/attention_elem.inc"
