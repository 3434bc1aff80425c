// The test target is given none of the Receptionist target's defines.
#if !APPLE_SYNC
let testLock = Mutex(0)
#endif
