// import Synchronization -- a comment, not an import
internal import struct Synchronization.Mutex

print("demo")
