/*===- DataEntry.c - a library whose plugin entry symbol is data ----------===*\
|*                                                                            *|
|* kjit_plugin_negotiate_v1 is an array here, not a function: a host that     *|
|* called it would jump into data (test/Plugins/only-regular-files-and-       *|
|* functions-load.test).                                                      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

unsigned char kjit_plugin_negotiate_v1[64];
