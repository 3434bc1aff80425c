// Everything is `static inline` in include/CReceptionistSync.h; SwiftPM needs one source file.
#include "CReceptionistSync.h"
