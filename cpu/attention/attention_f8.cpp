// The attention engine's kernel over F8_E4M3 K/V rows (cpu/attention/attention_elem.inc).
#define TS_ATTEND_ELEM F8E4M3
#define TS_ATTEND_FN AttendF8
#define TS_ATTEND_ENTRY attend_f8
#include "cpu/attention/attention_elem.inc"
