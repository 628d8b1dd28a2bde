"""The IR readers: MLIR locations and regions, PTX loops and widths, SASS lines, occupancy."""
from __future__ import annotations

from ladder.diagnoser.ir import mlir, ptx, sass
from ladder.runner import hardware
from ladder.diagnoser.ir.locations import Frame, MlirLocations, trailing_loc, user_frame

LIB = "/venv/lib/python3.11/site-packages/triton/language/standard.py"


def test_location_aliases_resolve_through_names_and_call_sites():
    locations = MlirLocations({
        "#loc1": '"/k.py":12:15', "#loc2": f'"{LIB}":293:36', "#loc3": '"s"(#loc1)',
        "#loc4": "callsite(#loc2 at #loc3)",
    })
    frames = locations.frames("#loc4")
    assert frames == (Frame(LIB, 293, 36), Frame("/k.py", 12, 15))
    assert user_frame(frames) == Frame("/k.py", 12, 15)


def test_fused_and_unknown_locations():
    locations = MlirLocations({"#loc1": "unknown"})
    assert locations.frames('fused[#loc1, "/k.py":3:4]') == (Frame("/k.py", 3, 4),)
    assert locations.frames("#loc1") == ()


def test_trailing_loc_ignores_parentheses_inside_strings():
    assert trailing_loc('%0 = tt.load %p : tensor<4xf32> loc("a(b).py":1:2)') == '"a(b).py":1:2'
    assert trailing_loc("tt.return") is None


MODULE = '''#blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module {
  tt.func public @k(%x: !tt.ptr<f32>) {
    %c0 = arith.constant 0 : i32 loc(#loc1)
    %r = scf.for %i = %c0 to %c0 step %c0 iter_args(%a = %c0) -> (i32) : i32 {
      %m = "tt.reduce"(%v) <{axis = 0 : i32}> ({
      ^bb0(%p: f32, %q: f32):
        %s = arith.maxnumf %p, %q : f32 loc(#loc1)
        tt.reduce.return %s : f32 loc(#loc1)
      }) : (tensor<1024xf32, #blocked>) -> f32 loc(#loc2)
      scf.yield %a : i32 loc(#loc1)
    } loc(#loc3)
    tt.return loc(#loc1)
  } loc(#loc)
} loc(#loc)
#loc = loc("/k.py":1:0)
#loc1 = loc("/k.py":2:3)
#loc2 = loc("/k.py":5:9)
#loc3 = loc("/k.py":4:5)
'''


def test_region_ops_take_their_location_and_types_from_the_closing_line():
    module = mlir.parse(MODULE)
    (loop,) = module.find("scf.for")
    (reduce,) = module.find("tt.reduce")
    assert loop.frame == Frame("/k.py", 4, 5) and reduce.frame == Frame("/k.py", 5, 9)
    assert reduce.loops == (loop.index,) and reduce.attribute("axis") == "0"
    assert mlir.tensor_types(reduce.tail)[0] == mlir.TensorType((1024,), "f32", "#blocked")
    assert [op.name for op in module.inside(reduce)] == ["arith.maxnumf", "tt.reduce.return"]
    assert module.resolve_alias("#blocked").startswith("#ttg.blocked<")


def test_tensor_types_of_pointers_and_memdescs():
    (pointer,) = mlir.tensor_types("tensor<128x32x!tt.ptr<f16>, #blocked1>")
    assert pointer.shape == (128, 32) and pointer.pointee == "f16" and pointer.encoding == "#blocked1"
    (memdesc,) = mlir.tensor_types("!ttg.memdesc<3x128x32xf16, #shared, #smem, mutable>")
    assert memdesc.shape == (3, 128, 32) and memdesc.element == "f16"


PTX = '''
.visible .entry k(
)
{
	.loc	1 10 16                         // k.py:10:16
	@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
$L__BB0_2:                              // =>This Inner Loop Header: Depth=1
	.loc	2 263 15                        // standard.py:263:15 @[ k.py:12:15 ]
	bar.sync 	0;
	cp.async.cg.shared.global [ %r18 + 0 ], [ %rd8 + 0 ], 0x10, %r19;
	.loc	1 11 4                          // k.py:11:4
	@%p8 bra $L__BB0_2;
	st.global.b16 [ %rd2 + 0 ], { %rs1 };
	ret;
}
	.file	1 "/src/k.py"
	.file	2 "/venv/lib/python3.11/site-packages/triton/language/standard.py"
'''


def test_ptx_instructions_carry_frames_loops_and_inlining():
    code = ptx.parse(PTX)
    load, barrier, copy, branch, store, _ = code.instructions
    assert load.frame == Frame("/src/k.py", 10, 16) and not load.in_loop
    assert barrier.in_loop and copy.in_loop and branch.in_loop and not store.in_loop
    assert barrier.frame == Frame("/src/k.py", 12, 15)  # the caller of the inlined library code
    assert ptx.async_copy_bits(copy) == 128


def test_global_access_widths():
    assert ptx.global_access_bits("ld.global.v4.b32") == ("load", 128)
    assert ptx.global_access_bits("ld.global.L1::evict_last.v2.b16") == ("load", 32)
    assert ptx.global_access_bits("st.global.b16") == ("store", 16)
    assert ptx.global_access_bits("ld.shared.v4.b32") is None


SASS = '''
	//## File "/src/k.py", line 8
        /*0000*/                   LDC R1, c[0x0][0x28] ;
.L_x_1:
	//## File "/src/k.py", line 9
        /*0010*/              @!P0 STL [R1], R2 ;
        /*0020*/                   BRA `(.L_x_1) ;
        /*0030*/                   EXIT ;
'''


def test_sass_instructions_carry_lines_and_loops():
    first, spill, branch, last = sass.parse(SASS)
    assert first.frame == Frame("/src/k.py", 8) and not first.in_loop
    assert spill.opcode == "STL" and spill.frame.line == 9 and spill.in_loop and branch.in_loop
    assert not last.in_loop


def test_occupancy_names_the_tightest_resource():
    h200 = hardware.for_target("cuda:90")
    assert h200["sm_count"] == 132
    assert hardware.occupancy(h200, registers=32, shared_bytes=0, num_warps=4)["programs_per_sm"] == 16
    by_regs = hardware.occupancy(h200, registers=255, shared_bytes=0, num_warps=8)
    assert by_regs["limiter"] == "registers" and by_regs["programs_per_sm"] == 1
    by_smem = hardware.occupancy(h200, registers=64, shared_bytes=120 * 1024, num_warps=4)
    assert by_smem["limiter"] == "shared_memory" and by_smem["programs_per_sm"] == 1
    too_much = hardware.occupancy(h200, registers=64, shared_bytes=230 * 1024, num_warps=4)
    assert too_much["programs_per_sm"] == 0


def test_ascend_target_has_its_own_table():
    ascend = hardware.for_target("npu:Ascend910B3")
    assert ascend["unified_buffer_bytes"] == 192 * 1024 and ascend["vectorcore_count"] == 40
