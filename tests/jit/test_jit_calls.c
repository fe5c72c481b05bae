#include "jit_test.h"
int main(void){require_jit();return 0;}
