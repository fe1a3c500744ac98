/*===- Empty.c - the floor of a process start -----------------------------===*\
|*                                                                            *|
|* The floor of a process start on this machine: a C program that does        *|
|* nothing (bench/disk-cache/warm-start.py).                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
int main(void) { return 0; }
