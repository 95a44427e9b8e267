// touchstone: the command line (being written: list, run, check, golden regen|verify).
#include <iostream>
int main() { std::cerr << "touchstone: not built yet\n"; return 1; }
