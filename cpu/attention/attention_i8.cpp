// The attention engine's kernel over I8 K/V rows (cpu/attention/attention_elem.inc).
#define TS_ATTEND_ELEM int8_t
#define TS_ATTEND_FN AttendI8
#define TS_ATTEND_ENTRY attend_i8
#include "cpu/attention/attention_elem.inc"
