"""A software prefetch for numba kernels whose next loads are known but scattered.

``prefetch(array, i, j)`` asks the CPU to bring the cache line of ``array[i, j]`` (a C-contiguous
2-D array) towards the core, without waiting for it and without changing anything: a hint, so the
kernel's results are the same bit for bit with or without it. It is LLVM's ``llvm.prefetch``
intrinsic (read, highest locality, data cache), emitted as one instruction (``prefetcht0`` on x86-64,
``prfm`` on AArch64).
"""

import llvmlite.ir as ir
from numba.core import cgutils, types
from numba.extending import intrinsic

_BYTE_POINTER = ir.IntType(8).as_pointer()
# The intrinsic's name carries its pointer type: "p0i8" (a typed i8 pointer) is the name of every
# LLVM the supported llvmlite versions link, and the opaque-pointer LLVMs upgrade it to "p0".
_NAME = "llvm.prefetch.p0i8"


@intrinsic
def prefetch(typingctx, array, i, j):
    """Prefetch the cache line of ``array[i, j]`` for reading (inside an ``njit`` function only).

    Parameters
    ----------
    array : C-contiguous 2-D array of any dtype
        Neither read nor changed.
    i, j : int
        Indices inside ``array`` (not checked).
    """
    signature = types.void(array, types.intp, types.intp)

    def codegen(context, builder, sig, args):
        array_type = sig.args[0]
        view = context.make_array(array_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, array_type, view, [args[1], args[2]])
        int32 = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [_BYTE_POINTER, int32, int32, int32]), _NAME)
        # read (0), highest temporal locality (3), data cache (1)
        builder.call(function, [builder.bitcast(pointer, _BYTE_POINTER), ir.Constant(int32, 0),
                                ir.Constant(int32, 3), ir.Constant(int32, 1)])
        return context.get_dummy_value()

    return signature, codegen
