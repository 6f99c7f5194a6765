// A shared library without stalesgd's entry points: the CLI refuses it in one line.
extern "C" int some_other_library_function() {
  return 0;
}
