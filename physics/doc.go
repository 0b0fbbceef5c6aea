// Package physics computes photons per pixel as nanoBragg does, in one
// fused gorgonia op (PixelOp) whose kernel (Render) loops over pixels and,
// inside each pixel, over sub-pixels.
//
// Loops, outermost first, as the reference: sensor layers, sub-pixels,
// sources, φ steps, mosaic domains. The orientation list (φ rotation about
// the spindle, then each domain's rotation) is built inside the op from the
// base cell vectors, so one op carries all of it. Per evaluation: the
// diffracted direction d from the sample to the sub-pixel centre, the
// scattering vector q = (d − i)/λ, fractional Miller indices h = a·q, the
// lattice factor of the shape (Π sincg(πh, N) for the parallelepiped), the
// structure factor (nearest reflection or tricubic interpolation), and the
// running sum of F²·F_latt² seeded with the water background. Per pixel:
// I = r_e²·fluence·Σ/steps·ω·P·capture,
// with the solid angle ω and the Kahn polarization P taken from the
// pixel's first sub-pixel and the capture fraction from the last layer's
// first, unless the -oversample_omega/-oversample_polar/-oversample_thick
// flags ask for every sub-pixel (then, as the reference does, the whole
// running sum is multiplied by the factor after each addition).
//
// # Conventions
//
//   - Units: SI only. Lengths in metres, wavelengths in metres, fluence in
//     photons/m², angles in radians; the image is photons per pixel.
//   - Inputs: the packed parameter vector (layout PPix0 … PDistance,
//     NParams values), the padded structure-factor table (h slowest, l
//     fastest, (hRange+1)(kRange+1)(lRange+1) values as the reference lays
//     it out), the source table (incident unit vector, λ/λ0), the mosaic
//     table (axis, angle fraction; angle = F·spread, in double precision
//     where the reference rounds it to float32, so that the image is smooth
//     in the spread) and the mask. NaN in the structure-factor table marks
//     a reflection without data: it takes the default F parameter.
//   - Output: shape (SPixels, FPixels), slow-major: img[s*FPixels+f].
//   - Parallelism: rows are shared out to GOMAXPROCS goroutines; every
//     pixel is computed independently, so results are bit-identical run to
//     run and for any number of threads.
//   - Everything structural (sizes, flags, table bounds, beam and
//     polarization axes) is in Config and in the op's hash; everything that
//     may differ between simulator instances is an input.
//
// # Gradients
//
// Gradient is the backward pass (PixelGradOp, PixelOp's SymDiff): reverse
// mode through one pixel at a time, recomputing the forward values on the
// way. A walk through the pixel's terms sums S (the running sum) and ∂S/∂P
// together: per term the derivatives of F_latt (sincg by h and by N taken as
// continuous, the round and Gaussian shapes, by the fudge and the
// reciprocal vectors) and of F (tricubic by hkl; by default F where a
// reflection has no data) give adjoints of h, k, l, hence of the
// orientation (kept per orientation and turned into gradients of the base
// cell vectors, φ start and step and mosaic spread once at the end) and of
// q, hence of the wavelength and of the sub-pixel's direction; the
// direction and distance go back through the detector geometry (including
// the curved detector's bending). The once-applied factors ω, polarization
// and capture fraction are differentiated where they were computed, with
// the sum as their weight. Under -oversample_* the sum is multiplied after
// every term; a first walk records each block's multiplier so that the
// second knows every term's weight. Piecewise parts (nearest-reflection
// lookup, tophat, the -dmin cut, the interpolation switch-off point) keep
// the derivative of their current piece.
//
// # Speed
//
// Profiles (pprof, one core, cubic 1024² unless said) guided these steps;
// each keeps the results deterministic and the parity and gradient tests
// green. Times are BenchmarkSimulate1024 with -cpu 1, A/B in one session.
//
//   - Lattice factor without math.Sin (it was 38 % of a run): h is a
//     Miller index, so reducing it by the nearest integer is exact, and
//     sin/cos πd on |d| ≤ ½ are short polynomials (trig.go); for
//     whole N ≤ 32, sincg = U_{N−1}(cos πh), the Chebyshev recurrence,
//     needs no division and is exact at the peaks. 277 → 150–166 ms.
//   - Scalars instead of [3]float64 in the pixel loops: Go keeps small
//     arrays in memory, and element stores followed by wide loads stalled
//     store forwarding (pprof -disasm). The solid-angle pass went from 46 to
//     12 ms, the image to ~113 ms.
//   - sincg of h, k and l side by side (sincg3): three independent chains
//     of dependent multiply-adds overlap. → 75–91 ms.
//   - A shortcut for the usual structure (flat detector, no -oversample_*
//     rules, parallelepiped with one whole N, nearest reflections): the
//     same arithmetic in the same order as the general pixel loop, without
//     the branches it leaves idle. 0.84×. (Now the lane kernels, below.)
//   - The solid angle the reference prints is summed by the rendering pass
//     from the ω values it computes anyway (RenderSolidAngle, bits compared
//     with SolidAngle): one pass over the pixels fewer, 13 ms at 1024².
//   - Memory: the image used to pass through three float64 buffers (the
//     op's output, gorgonia's Read clone, a copy) and a float32 conversion,
//     477 MB at 4096²; the simulator now takes the op's output itself, and
//     simulate renders into float32 (Config.Float32) as the reference stores
//     its float image: 83 MB.
//   - Compile time: the graph algebra folds constants and the identities
//     of 0, 1 and −1 (convention vectors are mostly 0 and 1); gorgonia's
//     register allocation grows with the square of the node count. 414 →
//     329 nodes, 19.5 → 13 ms per cold build. Later the forward program
//     dropped the primitive-op parameter graph altogether (package graph:
//     one op evaluates it on numbers): 10.4 → 0.44 ms per build, about
//     half the fixed cost of a whole simulate process.
//   - Gradient: sincg's derivatives from the Chebyshev recurrences (U, U′
//     and T_n; later a closed form, below) for h, k, l side by side; scalar
//     walks for the usual structure (walkSimple, and lossRow (then for one
//     sub-pixel only), a row per call, the geometry's adjoints summed over the
//     row before they reach the accumulators). Gradient run at 1024²: 570 →
//     ~200–250 ms.
//
// Later steps were measured by counting instructions (cachegrind, every 8th
// row of the cubic 1024² case and of 10 mosaic domains at 512², loss rows
// and forward rows) and by timing the rows interleaved in one process:
//
//   - Rows of one sub-pixel and one layer (the standard cases) compute 1/R
//     and d for 64 pixels ahead of their terms (then chunkGeometry; now
//     lossFrontLanes and pixelsLanes; the loss rows take 256 since, see
//     below). Each
//     pixel's square root and division headed the chain through d and q to
//     the lattice factors, which kept the next pixel from starting early
//     enough: forward rows 7.9 → 5.0 ms, loss rows 14.2 → 12.7 ms. Only
//     the pixels the ROI, the mask and the loss keep are listed and
//     computed (chunkPixels), so a small ROI costs what it did.
//
//   - sincg's derivatives in closed form away from the peaks (within 1/64
//     of an integer the U′ recurrence is kept), with |sin πd| from
//     √((1 − cos πd)(1 + cos πd)) instead of its series; the recurrence two
//     steps at a time without register moves; the closed form for all
//     three, replaced near a peak (sincgNearPeak).
//     Loss rows: 1382 → 1269 instructions per cubic pixel, 8233 → 7097 with
//     10 domains.
//
//   - (Since replaced by the row sums below.) Loss rows stage three
//     derivatives per orientation (by h, k, l) and form the nine by a, b,
//     c once ∂L/∂S is known, straight into the tile
//     sums when there is one source; the per-source sums go through a
//     struct in memory (Go keeps no register across a call); ∂S/∂F is 2S/F
//     per source without a structure-factor table; the backward pass lost
//     a few products. The staging made mosaic loss rows 14 % faster (fewer
//     memory operations); the rest moved instruction counts by 1–2 %.
//
//   - The loss rows were rebuilt around what the adjoints are linear in
//     (lossRow). Along a row the lab position is p = P₀ + fdet·f, so
//     the nine orientation adjoints Σ u_i·q_j (u = ∂L/∂(h, k, l)) follow
//     from three row sums of 3-vectors, Σ u/R and Σ fdet·u/R for the part
//     of q across the beam and Σ u·|d − inc|² for the part along it
//     (d·inc − 1 = −|d − inc|²/2, which does not cancel at small angles),
//     and Σ u/R gives the part of ∂L/∂p that comes through q, less a
//     multiple of d per pixel: σ = Σ u_i·(o_i·d)/λ, formed with the terms from h_i
//     and a per-orientation constant. That replaces two 3×3 products per
//     pixel and orientation by three sums. ∂/∂λ0 follows from the
//     orientation adjoints (∂q/∂λ0 = −q/λ0), ∂/∂F from the fluence sum
//     when every term has the one F, ∂P/∂K at K = 0 is −½(e² − b²).
//     Each chunk of pixels runs in three passes: the terms (termsGrad,
//     orientation by orientation over the chunk's pixels, so the loop's
//     set-up is paid once per chunk), the loss terms (the loss is a
//     PixelLoss evaluated inline, no longer a closure called twice per
//     pixel), and the backward pass in loops without calls whose running
//     sums fit in registers; the row totals live in memory, touched once
//     per chunk. Graph-level gradient run, cubic 1024²: 1364 → 1110 →
//     ~910 instructions per pixel over these steps.
//
//   - sincgGrad3's common case has no calls: when an index is within 1/64
//     of an integer all three go to sincgGrad1 (about one call in
//     eleven). The fix-up calls had made Go spill every live value on
//     every path: ~75 stack moves per call.
//
//   - Gradient tiles share one scratch state per goroutine
//     (parallelWorkers): 64 tiles allocating 13 kB each brought a garbage
//     collection into most 256² gradient runs (~170 instructions per
//     pixel). The tape machines watch every instruction (quietVM): with
//     no logger that logs nothing and skips gorgonia's per-instruction
//     search of an empty watch list; a gradient run's fixed cost went from
//     ~1.4 to ~1.15 ms, the forward's from ~0.45 to ~0.33 ms.
//
//   - Vector lanes (issue 17): the usual structure's forward rows are
//     lanes.go, written once against a small lane vocabulary and
//     generated (go generate, internal/lanegen) into a scalar kernel and,
//     in a binary built with GOEXPERIMENT=simd, an AVX2 kernel on four
//     float64 lanes (simd/archsimd), picked at run time by the CPU's
//     features (dispatch.go). Each lane does the scalar operations in the
//     scalar order (no fused multiply-add): TestLanesBits compares every
//     golden case bit for bit, and TestVectorBuild runs it in the vector
//     build from the default test run. The general loops' helpers are the
//     same functions on one lane. Whole simulate processes, one thread,
//     against the reference (gobragg bench --ref, one session): cubic
//     1024² 0.34 → 0.22× (a third of it is process start and compile),
//     mosaic 0.24 → 0.12×, triclinic 512² 0.38 → 0.17×, comprehensive
//     0.25 → 0.06×. The scalar kernel costs the default build 7–18 % on
//     the standard cases against the hand-written shortcut it replaced
//     (comprehensive 3 % less); see below for what recovered it.
//
//   - Loss rows on lanes: the terms (termsGradLanes: sincg's derivatives
//     in closed form for the three indices side by side, the near-peak
//     recurrence for the three where any lane is within 1/64 of an integer,
//     merged per lane; the structure factor and its ∂/∂F from one cell
//     lookup), the chunk's front (lossFrontLanes: geometry, ω,
//     polarization with its derivative coefficients) and the backward pass
//     (lossBackLanes). The backward sums are four partial sums (eight
//     in the Go 1.27 vector build since the fourteenth session), pixel p in
//     sum p mod 4, added in a fixed order per chunk: a sum in pixel order
//     held in one vector (each vector's lanes added one by one) kept the
//     old bits but cost the AVX2 kernel 8 %. Records per quantity
//     (lossFront, termLanes) instead of per pixel. In-process, one thread,
//     vector build: gradient at cubic 1024² 83 → 39 ms, 10 domains at 512²
//     130 → 53 ms; per pixel (cachegrind, one run) 949 → 407 instructions.
//     A zero lattice factor needs no merges: its products add ±0.
//
//   - The one-lane copy reads a lane of a slice as x[i] (lanegen's
//     oneLane), not x[i:][0] (a slice formed, two bounds checks): default
//     build gradient 113 → 100 ms, forward 61 → 58 ms at 1024².
//
//   - Forward rows of one sub-pixel form d and ω for 64 pixels ahead of
//     their terms, as the old hand-written shortcut did, so that the
//     square root and division do not head each pixel's chain: forward at
//     1024² default 57 → 48 ms (the hand-written shortcut's 48 ms again),
//     vector 22 → 20 ms.
//
//   - The solid-angle sum runs in pixel order (its bits are the general
//     loops'): after each row it was a chain of dependent additions, ~4
//     cycles a pixel. The single-sub-pixel forward kernel now adds each
//     vector's ω terms, one lane after another, into the first lane of a
//     vector (vaddseq, 256-bit shuffles and adds only), where they overlap
//     the terms' work: forward at 1024² vector 19.7 → 16.5 ms, default
//     47.8 → 45.0 ms.
//
//   - cos πd from a minimax polynomial of degree 16 instead of the
//     degree-20 Taylor series (trig.go, internal/cosfit; as accurate in
//     float64: within 2.3e-16 against 2.7e-16): two multiplications and
//     two additions fewer per index, three indices per orientation and
//     pixel. Forward at 1024² vector 15.9 → 15.5 ms and default 44.1 →
//     42.5 ms; with 10 domains vector 18.9 → 17.3 ms and default 70.1 →
//     64.5 ms; gradients 1–3 % faster. Every golden case renders the same
//     float32 image and prints the same statistics as before.
//
//   - AVX-512: lanes.go's third copy, on eight lanes of Float64x8
//     (lanes_avx512_gen.go), where the CPU has AVX-512 (F, CD, BW, DQ,
//     VL). Its ceiling is VRNDSCALEPD's at scale 2⁰ (CeilScaled(0)), the
//     solid-angle sum adds the low four lanes and then the high four
//     (vaddseqAVX512), and the backward pass's partial sums stay four
//     (slot vectors: vslotadd adds the low half, then the high half;
//     eight in the Go 1.27 build since the fourteenth session), so
//     every tier gives the same bits. On this machine (an AMD EPYC of
//     the Turin kind, whose 512-bit units are full width), one thread,
//     AVX-512 against AVX2 pair by pair (BenchmarkLanes* in graph): the
//     forward at cubic 1024² 15.5 → 8.7 ms (0.67×), with 10 domains
//     12.8 → 7.8 ms (0.61×), 0.61–0.78× over later runs; gradients
//     0.87–0.93× (their terms gain less: square roots and divisions,
//     and the near-peak branch, which one lane of eight in a vector now
//     takes for the whole vector about half the time; the near-peak
//     formulas for every lane instead, with no closed form and no
//     branch, made the gradient 13–30 % slower).
//
//   - The compensated loss sum in registers: neumaier took pointers, so
//     the running sum and its compensation went through the stack in
//     every pixel's chain (13 % of an AVX-512 gradient run at 1024²);
//     chunks with no mask and no skipped pixel are listed as runs.
//     Gradient at cubic 1024² (AVX-512) 24.8 → 21.4 ms. Then the backward
//     pass on eight lanes: 22.2 → 20.7 ms, 10 domains 33.0 → 31.5 ms.
//
//   - Images on huge pages (makeHuge): the pixel op's output is advised
//     onto transparent huge pages before it is filled. In the virtual
//     machine this was measured on, a first touch of a 4 kB page cost
//     ~20 µs: a 4096² float32 image took 17,500 page faults, then ~1,700
//     for the whole process; its CPU time fell by 0.08–0.14 s.
//     Twentieth session, AMD EPYC virtual machine: images of 32 MB or
//     more are left on small pages (hugeMost says why: in whole processes
//     right after another, cubic 4096²'s time/ref 0.11 → 0.07–0.09; in
//     one process rendering again and again the smaller images are faster
//     on huge pages). Small pages for every image were tried first: the
//     in-process cubic 1024² forward took 1.06–1.19× as long, and with
//     MADV_POPULATE_WRITE on small pages 1.2× (it walks every page of
//     memory the heap reuses, backed already: ~0.3 ms for 4 MB).
//
//   - sincg's derivatives one index after another (sincgGradLanes), not
//     the three side by side: Go gives vectors 15 registers (not
//     AVX-512's 32), and the side-by-side chains kept more values live
//     than that; the AVX-512 termsGradLanes spilled 262 vectors to the
//     stack (static count), now 141. The near-peak fix-up runs per index
//     (when any lane has that index within 1/64 of an integer), not for
//     the three when one needs it. Gradient, AVX-512, one thread pinned
//     to one vCPU, medians of 10 alternated runs: cubic 1024² 20.6 →
//     17.1 ms, 10 domains 32.0 → 23.7 ms; AVX2 −1 to −3 %, the default
//     build unchanged (±1 %).
//
//   - N as a fit moves it on the lanes: the usual structure was one
//     whole N ≤ 32 on all three axes, so refining N (not whole after the
//     first step) sent every fit with N to the scalar general walk. The
//     lane kernels now take N per axis (laneReps.nmode): 1 at N ≤ 1, the
//     Chebyshev form for whole N ≤ 32, else Sincg's continuation
//     sin(Nπd)/sin(πd) in its operations (sincgRatioLanes; the gradient
//     in the general walk's formulas), kept apart from the one-whole-N
//     code so that it compiles as before: lanegen writes copies of
//     pixelsLanes and termsGradLanes (//lanegen:variant: pixelsAxesLanes,
//     termsGradAxesLanes) with the lattice factor's function renamed,
//     and dispatch.go picks them. As a second loop beside the one-N loop
//     the 10-domain gradient was 3–5 % slower, and as a call inside
//     pixelsLanes' row loop the default build's forward up to 10 %. Images keep the general
//     loops' bits (TestPixelSimple, TestLanesNotWholeN). gobragg fit of
//     16 parameters (cell, orientation, detector, Na, Nb, Nc, fluence) on
//     testdata/fitdata's moderate image: 3.67 → 0.83 s, the same fit.
//
//   - Loss rows with sub-pixels. The loss rows took one sub-pixel only, so
//     a fit at the reference's automatic oversampling (2 for
//     testdata/fitdata's crystal, and for most command lines copied
//     without -oversample) ran the scalar walkSimple pixel by pixel.
//     lossRow now runs the front and the terms once per sub-pixel (the
//     terms adding to the sums the previous sub-pixel left, in the forward
//     rows' order, so the intensities keep Render's bits) and the
//     backward pass once per sub-pixel, the first adding the factors' (ω,
//     polarization: the pixel's first sub-pixel's) adjoints; the row sums
//     are kept per row of sub-pixels, whose P₀ differ. One sub-pixel keeps
//     its bits. gobragg fit of cell and orientation on the moderate image
//     at -oversample 2 (vector build, one pinned thread): 5.6 → 0.95 s, the
//     same fit (0.68 s at -oversample 1). Then sensor layers: the layers'
//     sub-pixels are rows of their own (P₀ with the layer's depth), the
//     pixel is scale·S·C·P·ω with C the last layer's first sub-pixel's
//     capture fraction, the backward pass takes g·C for g and C's own
//     adjoint is added per pixel; a chunk where C is 0 (the reference then
//     takes a later sub-pixel's) or g·C underflows goes pixel by pixel.
//     A fit with a 100 µm sensor in two layers: 5.1 → 1.1 s. The later
//     sub-pixels have kernels of their own (lossFrontSubLanes,
//     lossBackSubLanes; the shared parts inline helpers): as a flag in the
//     first sub-pixel's loops they cost the one-sub-pixel gradient 5–10 %
//     (the compiler spilled the running sums at each loop head). The
//     one-sub-pixel loss and gradient keep their bits (a 16-parameter fit
//     writes the same fit.json); the AVX-512 gradient measured 0–5 % slower
//     than before with the same kernel code instruction for instruction
//     (layouts of that same code spread 17.3–18.4 ms at 1024²).
//
//   - Row set-up and the image statistics. On an Intel Xeon (Emerald
//     Rapids kind, AVX-512) lanesRow's conversion of each pixel's index
//     to its float64 f was a seventh of a cubic 1024² forward run's
//     samples (pprof): f is now formed by additions of whole numbers,
//     eight independent ones at a time (the same bits), and the loss
//     rows' chunks do the same where their pixels are a run (4 % of a
//     gradient run, perf). In-process forward and gradient at 1024² and
//     the forward with 10 domains 0.97× (medians of 10 pairwise ratios
//     of alternated runs, which spread 0.65–1.23: the machine drifted;
//     single alternations had shown 0.91–0.95×). simulate's statistics (mean, rms, rmsd over the
//     float32 image) were two passes of one running sum, 17 % of a whole
//     4096² run; ImageSums sums each row in four slots on the lanes
//     (imageSumsLanes, imageDevLanes, through lanegen's float32 load):
//     54 → 21 ms in-process at 4096² (vector build; the default build's
//     scalar slots ~60 against 55 ms, slightly slower), the whole 4096²
//     process 0.286 → 0.256 s. A float32 row is then stored from the
//     lanes (rowF32Lanes: VCVTPD2PS rounds as Go's conversion does), and
//     a row the ROI and mask leave whole is no longer cleared before it
//     is written: in-process 4096² float32 0.95× (median of 8 pairwise
//     ratios, 0.85–0.97), the float64 image at 1024² (whose buffer Go
//     had just cleared) 0.85×, the whole 4096² process ~0.97×; the
//     default build even.
//
//   - The backward pass without blends: lossBackLanes took each of its
//     ~29 terms per pixel through a blend with 0 where ∂L/∂I = 0; every
//     term has that factor, so such a pixel adds ±0 and leaves the sums
//     as they were while its other factors are finite (lossBackLanes'
//     doc says why they are). The same bits (a 6-parameter fit writes the
//     same fit.json); gradient 0.95× at 256² and 1024², 0.99× with 10
//     domains (AVX-512), 0.89× and 0.92× in the default build (medians of
//     8 pairwise ratios of alternated runs, Intel machine).
//
//   - Tried and left out on that Intel machine (medians of 3–4
//     alternated runs): the derivative by x as −π·s·U′_{n−1}(c) at
//     every x (U′ by its recurrence beside U's, s from the sine
//     polynomial: no square root, no near-peak branch; 1024² gradient
//     even, 10-domain gradient 14 % slower: more live values and
//     operations than the branch saved); each vector's geometry computed
//     while the one before takes its terms (forward 10–20 % slower).
//     There the square roots and divisions of the terms are a larger
//     share than on the AMD machine of the entry below: leaving them out
//     (results wrong) saved 9 % and 10 % of the 10-domain gradient, the
//     near-peak branch as well 22 %.
//
//   - Loss rows in chunks of 256 pixels instead of 64 (rowChunk; the
//     forward rows keep 64, geoChunk: 256 was even to 3 % slower there).
//     Measured by two processes, the old build and the new, pinned to one
//     CPU and taking turns run by run (40–60 pairs, the median of the
//     pairwise ratios, which two identical builds put at 0.98–0.99; the
//     harness is graph/internal/turns): gradient 0.91–0.94× at cubic
//     1024², 0.96× with 10 domains, 0.94–0.97× with 2×2 sub-pixels in 3
//     layers, 0.99× at 256². Alternated whole benchmark runs had put
//     this within noise: the machine's speed drifts by up to 2× within a
//     minute. Measured the same way and left out: eight partial sums
//     instead of four (full-width slot vectors on AVX-512; 1.00× at 1024²,
//     1.07× with 10 domains); one division for the three π/s of the terms
//     (π/(s_a·s_b·s_c) times the other two: 1.01–1.03×, 1.01–1.05×); sin πd from its
//     polynomial instead of √((1 − c)(1 + c)) (1.02–1.05×, 1.02–1.07×); the
//     loss terms' compensated sum in four interleaved chains (1.02–1.08×
//     at 1024²; a plain sum in place of the compensated one gained 3 %,
//     within noise). The terms' loop is bound by its vector operations:
//     per orientation and vector of pixels the AVX-512 loop issues 293
//     (252 floating-point, 41 logical and blends) against the forward's
//     149, which two 512-bit ports take in at least 147 and 75 cycles; it
//     runs in ~207 and ~124 (mosaic case: the profile's share of the run
//     at the 2.7 GHz a dependent multiply chain measured), 1.7× the
//     forward's on the terms alone, before the loss rows' geometry and
//     backward pass.
//
//   - Tried and left out (no gain within the machine's noise, min of 3–4
//     interleaved runs): the near-peak recurrence per index instead of for
//     all three (in the side-by-side form of then; one index at a time,
//     above, it came with the change); one division for the three π/s; separate variables for
//     the four partial sums in the one-lane copy (they spill either way).
//     Leaving out the square roots or the divisions altogether (results
//     wrong) saved 8 % and 5 % of the 10-domain gradient: the terms are
//     not bound by them. Later (issue's mosaic case, turns): without the
//     square roots, divisions and near-peak branch 0.87×, and with no
//     lattice-factor derivatives at all 0.75× (1.67× the forward), the
//     floor of this structure; the backward pass's sums in eight slots
//     (one 512-bit add each instead of two 256-bit adds and an extract)
//     and its loads without bounds checks: no gain (1.00–1.05×).
//
//   - Paths beyond the standard cases, surveyed against the reference
//     (whole processes, one CPU, cubic 512² and 1024²) on the Intel
//     machine. The structure factors' lookup built its vector by storing
//     eight values one by one and loading them (the load waits for the
//     stores; the loop kept its counter on the stack): a third of the
//     forward's profile in the mosaic case. vgather builds it in
//     registers: forward 0.89–0.93×, gradient 0.97× (turns, case mosaic).
//     math.Exp mixes VEX and legacy SSE instructions, which costs an
//     AVX–SSE transition per switch while the vector registers' upper
//     halves are in use, as they are after every asynchronous preemption
//     in a GOEXPERIMENT=simd build: the Gaussian shape's image took 1.4 s
//     where the default build took 0.16 s (exp clears them first). The
//     interpolated structure factors computed each Lagrange polynomial's
//     products and denominators anew: 0.83× with them computed once per
//     axis (the same bits), level with the reference at 512². The
//     Gaussian and top-hat shapes now run on the forward lanes
//     (shapeLatticeLanes; the general loops take the same formula on one
//     lane, with expLanes for e^x, ≤ 2 ulp from math.Exp): at 1024²
//     0.02–0.04 s against the reference's 0.43 and 0.28 s, with 10
//     mosaic domains 0.08 s against 0.83 s (before: 0.15, 0.08 and
//     0.91 s); the round shape (sinc3Lanes, sin and cos of π√u from
//     the π-scaled polynomials) 0.15 → 0.03 s, reference 0.25 s. Their
//     gradients then still took the general loops (the Gaussian's 25×
//     its forward at 512²; below). Whole N above 32 took the general loops; the
//     lanes' ratio form for N not whole gives the same images (the sign
//     of the definition aside, which F_latt² does not see): N 50 at
//     1024² 1.7 → 0.2 s (reference 1.7 s), its gradient 0.09× at 512².
//     An interpolating render rendered the whole image interpolating and
//     then every pixel after the reference's switch-off point again:
//     now in batches of rows until the batch that holds the point, the
//     rest once, on the lanes (P1.hkl, 512²: 0.11 → 0.02 s, reference
//     0.07 s); its gradient takes the loss rows after the switch-off
//     point's row, and finds the point in the same batches (0.085×,
//     1.8× its forward). -dmin on the forward lanes (dminMergeLanes puts a
//     source's terms back where q is beyond the limit): 1024² with 10
//     domains 0.50 → 0.08 s, reference 1.45 s. The curved detector on
//     the forward lanes (bendLanes; the general loops and the gradient's
//     geometry take its one-lane copy, cos and sin of π·(φ/π) from the
//     π-scaled polynomials): 0.17 → 0.03 s, reference 0.27 s. The
//     -oversample_polar and -oversample_omega rules on the forward lanes
//     (pixelsAxesRulesLanes: the running sum times P, then ω, after every
//     term, P recomputed every source and ω every sub-pixel, their sum
//     kept for the solid angle; identity steps in the usual kernels):
//     at 2×2 sub-pixels 0.26–0.33 → 0.06–0.07 s (reference 0.63–0.86
//     s), with 10 domains 1.29 → 0.31 s (4.7 s). -oversample_thick
//     too (captureRuleLanes): its capture fraction per sub-pixel takes
//     math.Exp, which the lanes do not reproduce bit for bit, lane by
//     lane (captureRow): 3 layers of 2×2 sub-pixels 1.06 → 0.79 s.
//
//   - Loss-row chunks for many terms a pixel (lossChunk): chunks kept at
//     most hklBudget values of ∂S/∂(h, k, l), so 10 energies × 100
//     domains left 5 pixels a chunk (one lane) and 600 terms with 2×2
//     sub-pixels the per-pixel walk. At least minVecChunk pixels now,
//     within hklCap: cubic 256², 100 domains × 10 energies, gradient
//     4.0 → 0.95 s, with 2×2 sub-pixels and 60 domains 10 → 2.2 s.
//
//   - The spot shapes' gradients on the loss rows (termsGradShapeLanes:
//     shapeGradLanes' derivatives, the fudge's and a*, b*, c*'s per-pixel
//     sums in shapeSums, weighed by shapeBackLanes): they took the
//     general per-pixel walk. 512²: Gaussian 0.097×, round 0.099×,
//     top-hat 0.095× (turns), 1.9–2.3× their forwards. -dmin on the
//     loss rows (termsGradAxesDminLanes, dminPolar): 512²
//     0.09–0.12× of the general walk's, 1.6–3.0× the forward.
//
//   - Interpolation on the forward lanes (pixelsAxesInterpLanes,
//     interpFLanes; kernel.interpolate is its one-lane copy): rows that
//     interpolate took the general loops until the switch-off point, and
//     with a table that covers the detector (no switch-off) that was the
//     whole image, and simulate walked it again for its warning (now the
//     render's Report). vgatherCube loads each lane's 16 rows of four
//     structure factors as vectors and transposes them (VPERMI2Q on
//     AVX-512), one bounds check per lane for its 4×4×4 cells (with a
//     check per row the address arithmetic had cost as much as the
//     divisions); a
//     lane out of the table gives NaN, and rowLanes hands the row from
//     that pixel on to the general loops (with a sensor thickness the
//     values are formed per pixel, laneValue, and the general loops take
//     the pixels from there). 512² with P1_varied.hkl 72 →
//     29 ms (turns); bound by the Lagrange polynomials' 42 divisions a
//     term (÷−6 and ÷6, which multiplications would not reproduce bit for
//     bit). Its gradient: the loss rows take the rows before the
//     switch-off point's (termsGradAxesInterpLanes, gradFInterpLanes:
//     interpGradLanes' derivatives of F by h, k, l and the default F,
//     added to ∂S/∂(h, k, l) by fGradAddLanes; the general loops'
//     interpolateGrad is its one-lane copy), and the switch-off search
//     renders its rows on the lanes: 512² 273 → 46 ms, 2.4× the forward.
//
//   - The lane data at 64-byte boundaries (align.go): laneReps, the
//     forward rows' geometry scratch and the loss rows' ∂L/∂I sat in
//     structs with pointers, 8 bytes into the allocator's slot, so every
//     64-byte vector of them crossed a cache line. laneReps now holds no
//     pointers (its lists are laneLists) and, with the row buffers and
//     loss-row records, comes from alignedMake. Forward 0.97× at cubic
//     1024², 0.99× with 10 domains, gradient 0.97–1.00× (turns): split
//     loads and stores were not what bound these loops. simulate's
//     statistics are summed per row as the render finishes each
//     (RowSums, ImageSums.AddDev), not in two passes over the finished
//     image (12 % of a whole 4096² process); and a row's pixel
//     coordinates are formed once per run of pixels (rowBuf.runN):
//     whole 4096² process 0.265 → 0.23 s, forward in-process 0.95–0.98×.
//
//   - The Poisson loss's terms on the lanes (poissonLanes, logLanes): a
//     fit's gradient runs spent a quarter of their time on them, one pixel
//     at a time through math.Log (the README's fit: 23 % of its profile,
//     now 8 %, with ~4 % more in lossRow gathering each chunk's counts,
//     weights and background at its start). logLanes is Go's amd64
//     math.Log (its assembly, archLog) operation for operation, so the
//     loss keeps its bits. Go 1.26 compiles ShiftAllRight by a constant
//     through a legacy SSE MOVQ of the count (it folds only left shifts
//     into immediates); written with it, the lanes were 2× slower than
//     the scalar loop: lanegen's vshrv shifts by a vector of counts. (The
//     legacy SSE stores with which Go clears local arrays write no
//     register and cost nothing measurable: the interpolation without
//     them 1.02×.) chunkPixels' scan of a fit's weights without a branch
//     per weight: its share of that profile 8.1 → 6.9 %.
//
//   - Tried and left out in the ninth session (turns, Intel Xeon,
//     gradient unless said): sincg's derivative by x as −π·s·U′_{n−1}(c)
//     everywhere with s from the sine polynomial (no square root, no
//     near-peak branch, one division for ∂/∂N): 1.13–1.15×; the near-peak
//     branch from 1/256 instead of 1/64 (rarer, still within TestSincgGrad3's
//     1e-12): 0.97–1.00×; the backward pass's sums in eight slots
//     (full 512-bit accumulators, no extracts) with its one-pass slot
//     loops written without the loop: 1.03–1.07×, the four slots without
//     the loop 0.99–1.03×, the row sums in two loops of fewer running
//     sums 1.06×. Spills of 512-bit values go to 8-byte-aligned stack
//     slots; Go's register allocator gives vectors X0–X14 only (its
//     fpRegMask), though the 512-bit instructions could use X16–X31.
//     The orientations as 9 float64 values broadcast per use instead of
//     repeated laneVals (which would lift maxRepOrient): forward 10–20×
//     slower, the broadcasts' scalar operands spilled and reloaded by
//     legacy SSE moves (MOVUPS) with the vector registers' upper halves
//     in use. The bound on repeated orientations (maxRepOrient) is 2¹⁶
//     instead of 2¹⁴ (37.7 MB of table at most): streamed once per vector
//     of pixels, a table beyond the caches still keeps up; 20,000 and
//     60,000 mosaic domains at 64²: 4.6× the general loops' speed.
//
//   - Tenth session: beyond 2¹⁶ orientations the usual structure's
//     forward rows (not interpolating) take a compact table (80 bytes an orientation,
//     pixelsManyLanes and pixelsAxesManyLanes), each value broadcast
//     from a two-value VEX load (lanegen's vbcp: LoadFloat64x2 and
//     Broadcast1To8, no legacy SSE register on the way, unlike a float64
//     argument to a broadcast). 70,000 mosaic domains at 64²: 37.3 →
//     6.9 s (the reference 128 s), the same bits (TestPixelSimple, with
//     N per axis, sub-pixels and layers too). For the standard cases the
//     repeated table stays: the broadcasts took the forward 2–4 % longer
//     (turns, mosaic case). Gradients beyond 2¹⁶ orientations keep the
//     per-pixel walk: their loss rows' scratch (hklCap) would leave
//     chunks of one pixel. A fit's weights are scanned eight at a time
//     (chunkPixels, scanWeights with AVX2): the reference series' DIALS
//     fit 84.4 → 79.1 s. Tried and left out: the Poisson gather in three
//     loops, one array each (2× slower over 19 images' boxes: each loop
//     misses the caches on its own); sincg's π/s as (π/s²)·s, the
//     square root and the division side by side instead of one after
//     the other (gradient 0.97–0.99×, within noise); each vk constant
//     its own table entry, so that the compiler loads it where it is used
//     instead of sharing one load (and spilling it) across the three
//     axes: gradient 0.95×, forward 1.05× (turns, 12 rounds, within
//     noise and the frame-position effect below).
//
//     The AVX-512 gradient's speed depends on where its stack frame sits
//     modulo 64 bytes: its 512-bit spill slots are 8-byte aligned, in
//     two groups 40 bytes apart modulo 64, so at most one group is
//     aligned and the other's loads and stores split cache lines. Called
//     through wrappers whose frames shifted it by 8 to 64 bytes
//     (turns, mosaic case), termsGradLanesAVX512 took 1.15–1.43× as long
//     at seven of the eight offsets; the unwrapped call sits at the
//     eighth, the fast one (and termsGradAxesLanesAVX512, case n50, at a
//     fast one too). The forward kernel does not care (all eight within
//     noise). The offset follows from the frames between the worker
//     goroutine's start and the kernel, so a change to lossRow's locals
//     can move it: a gradient that turns finds 15–40 % slower after an
//     unrelated change wants this checked first.
//
//   - Eleventh session: a loss may list its pixels (PixelLoss.Pixels,
//     with one value per listed pixel), and graph's Objective lists those
//     a weighted loss weighs. A fit's boxes are a fraction of the
//     detector, but each evaluation scanned every weight of every image
//     (chunkPixels) and gathered counts, weights and background from
//     three whole images: memory traffic by the detector's size. The loss
//     rows now take a row's listed pixels (listChunk) and, where a
//     chunk's pixels follow one another in the list, hand the Poisson
//     lanes the list's run of values without copying it; the per-pixel
//     walk finds each pixel's place by walking the list beside the
//     pixels (indexAt), not by a search per pixel. The chunks, so the
//     bits, are the full images'.
//     One evaluation of 200 boxes of 10² on 1024², against the whole
//     image: 0.093–0.114 → 0.046–0.051 (BenchmarkBoxes1024); the
//     reference series' DIALS fit (19 images of 512², a third of the
//     pixels in boxes) 84.5 → 79.9 s on one CPU, the same fit.json.
//
//   - Thirteenth session, what a fit pays per evaluation. With an -hkl
//     table every kernel copied it three times (graph marked its cells
//     without data with NaN, the kernel filled them with the default F
//     and flagged them, a gradient made the flags into bits): for a
//     table of 121,443 reflections (99×99×47 cells) a box fit's
//     gradient took 13.0 ms against 2.3 ms with no table. The grid now
//     marks its table once (formats.HKLGrid.Marked) and the kernels keep
//     the fill, flags and bits of the last four tables per default F
//     (ftable.go): 3.2 ms against 3.1, and that crystal's whole fit
//     (1024², cell and orientation) 24.5 → 8.8 s, the same fit.json.
//     Then the crystal's gradient alone (Config.CrystalOnly, graph's
//     Simulator.CrystalGradient, which an Objective runs when its
//     parameters move nothing but the crystal: the default fit of cell
//     and orientation): the terms without σ and the derivatives by N
//     (termsGradCrystalLanes), the default F's sum off (perDef), the
//     backward pass with its row sums only (lossBackLanes,
//     lossBackSubLanes), the other parameters' gradients set to 0. The
//     crystal's are the same bits (graph's TestCrystalGradient, eleven
//     structures, both builds); turns against the whole gradient:
//     0.88–0.89× at cubic 1024², 0.87× on the mosaic case
//     (medians of 15–20 rounds in a noisy phase of the machine;
//     quartiles 0.83–1.07 and 0.77–0.95), 0.99× with 1,000 terms a pixel
//     (case many: the terms and the row sums, which the crystal needs,
//     are the time there). Of that, the terms' copies without σ and the
//     N sums gave 0.94× at 1024² and 0.99× on the mosaic case (turns of
//     the crystal's gradient with and without them; quartiles
//     0.85–1.04, 0.91–1.05): the loss rows' backward loops were most of
//     it.
//
//   - Fourteenth session: Go 1.27 (GOTOOLCHAIN=go1.27.3, which the go
//     command fetches) allocates AVX-512 values to X0–X14 and X16–X31,
//     where Go 1.26 stops at X14: termsGradLanesAVX512 spills 64 vectors
//     (static count) instead of 130. Its simd/archsimd names loads from
//     arrays LoadArray, from slices Load, and the slice store Store, so
//     lanegen writes each vector kernel once per Go (the _go127_gen.go
//     files, build tag go1.27; the Go 1.26 kernels are the same
//     instructions as before). Small functions calling the one name or
//     the other, inlined, were tried first: they left a no-op
//     instruction per call in the Go 1.26 kernels (10 → 49 in
//     termsGradLanesAVX512) and moved its frame, and the mosaic case's
//     gradient took 1.32× as long (the frame offset above). Go 1.27
//     against Go 1.26, turns, one CPU, 15 rounds: mosaic case gradient
//     0.86× (earlier 20 rounds: 0.91×), forward 0.99× (0.97×); cubic
//     1024² gradient 0.97× (0.97×), forward 0.95× (0.95×). The
//     gradient/forward ratio of the mosaic case: 2.18 against 2.36.
//     Then, in the Go 1.27 vector build only (slots8.go), the backward
//     pass's sums in eight partial sums (slots), tried before with Go
//     1.26 (above: 1.00×, 1.07×): one 512-bit addition a sum and
//     vector, where four partial sums took an extract and two 256-bit
//     additions. Go 1.27 build, turns against four slots: mosaic 0.94×
//     (12 rounds; a first version 0.95×), cubic 1024² 0.91× (0.95×);
//     AVX2 (GOBRAGG_LANES=avx2, mosaic) 0.93×. With Go 1.26 eight slots
//     made the gradient at cubic 1024² 1.10× (quartiles 1.08–1.11; its
//     backward pass's running sums, 512-bit now, spilled to 8-byte-aligned
//     stack slots: 88 such moves against 104 of 256-bit ones), so the
//     other builds keep four (slots4.go; the default build with eight
//     was 1.01×). slotSum written as one loop for both counts, inlined into
//     lossRow, moved the Go 1.26 gradient kernel's stack offset: 1.37× at
//     1024² (each count has its own slotSum now, the Go 1.26 code as it
//     was). simulate's image statistics take the build's slots. In the
//     Go 1.27 vector build the gradients' last bits moved: every row of the
//     capture study kept its captured, converged and verdicts (median
//     evaluations −7 to +7 %), TestStdErrs' scatter is as before, and
//     gradcheck and the README's fit (324 evaluations, the same loss) are
//     unchanged. How far the divisions are from the bound now (Go 1.27,
//     mosaic, not kept, wrong gradients): without sincg's square roots
//     and divisions 0.90–0.93×. Tried and left out: the row sums'
//     g·scale·P·ω formed once per chunk instead of once per source and
//     orientation (the same bits; 1.02× mosaic, 1.01× 1024², 15 rounds).
//
//   - Fifteenth session, on an AMD EPYC (Zen 4, AVX-512 in two 256-bit
//     halves; Go 1.27 vector build unless said; turns, medians of 8–12
//     rounds). Where the gradient's time goes there: leaving out every
//     lattice-factor derivative (results wrong) 0.70× (crystal's
//     gradient 0.60×: 1.67 and 1.38 times the forward, the floor of this
//     structure); leaving out the square roots and divisions 0.93×
//     (0.90×); leaving out the near-peak branch 0.93× (0.84×). A
//     rarer branch (closedFormMin 1/256) gained nothing (0.95×, 0.99×):
//     its cost is the three places where the kernel may branch, each
//     with the values the peaks need live across it, not how often it
//     is taken. So the Go 1.27 AVX-512 kernels test the three indices
//     once (sincgGrad3OnceLanes, which lanegen's Target.Inline puts in
//     sincgGrad3Lanes' place for that target only; the same values):
//     mosaic gradient 0.94×, crystal's 0.87×; cubic 1024² 0.99× and
//     0.87×; forward even. That made the whole gradient's kernel "big"
//     to Go's inliner, which then left the structure factors' gather
//     (vgatherAVX512) as a call; written out in place there (lanegen's
//     gatherExpr) the gradient took 1.34× and the crystal's 1.24×, but
//     the crystal's kernel, with the per-index form and the gather as a
//     call that Go may not inline (vgatherCallAVX512), took 0.93× of the
//     once form's time. So in the Go 1.27 AVX-512 build only the whole
//     gradient's kernel (termsGradLanes) tests the peaks once (an Inline
//     entry keyed by its caller), and its gradient kernels call the
//     gather; the forward kernels, which Go also considers big, gather
//     in place (vgatherIn): mosaic forward 0.96× (Go 1.26 build 0.94×,
//     its gradient kernels unchanged). Altogether, against
//     the session's start (turns, 12 rounds): mosaic forward 0.95×,
//     gradient 0.98×, crystal's 0.80×; cubic 1024² (no table, no
//     gather) forward 1.04× (noise), gradient 0.95×, crystal's 0.87×.
//     Then Config.CrystalOnly keeps the fluence's and the water seed's
//     gradients as well (lossBackLanes' sums flu and ibg, the same
//     operations in the same slots), so that a fit's coarse stages,
//     which refine the fluence beside the crystal, run the crystal's
//     gradient: the README's fit 0.311 → 0.293 s, the same fit.json. With 15 registers the same form spills (Go
//     1.26 AVX-512 1.32×, Go 1.27 AVX2 1.24×, default build 1.11×), and
//     even rewriting sincgGradLanes as a call of the shared closed form
//     (the same arithmetic) moved the Go 1.26 AVX-512 gradient kernel's
//     frame (0xb18 → 0xc20 bytes) and made it 1.41×: so sincgGradLanes
//     keeps its text, sincgGradFarLanes repeats its closed form word for
//     word (TestSincgGradFarIsCopy), and both new functions are marked
//     //lanegen:last so that every other generated function keeps its
//     inlined names (the Go 1.26 and default gradient kernels are the
//     same instructions as before, compared by objdump). Tried and left out:
//     ∂/∂x as −π·s·U′_{n−1}(c) everywhere, s from the sine polynomial
//     (no square root, no branch; ∂/∂N still a division): gradient
//     1.07×, crystal's 0.95× (0.88× at 1024²); the same with s from
//     √(−v(2 + v)), v = cos πd − 1 from the cosine's polynomial without
//     its constant term (exact near the peaks): 0.97×, 0.90×; that with
//     the recurrences two steps at a time: 1.12×, 0.99×; the three
//     indices' recurrences side by side in one loop: 1.29× (crystal's
//     0.95×), and with one test for the peaks 1.17× against it; the
//     structure factors' gather from the indices in a vector register
//     (VCVTTPD2QQ, lane extracts) instead of their store and scalar
//     loads: forward 1.02×, gradient 1.02× (the loads themselves, not a
//     store forwarding, are its cost). Here the AVX2 kernels are
//     1.17–1.28× the AVX-512 ones (forward and gradient), as on the
//     Intel machine the dispatch's choice.
//
//   - Sixteenth session (the same AMD EPYC; turns, medians of 6–12
//     rounds, against the session's start): sincg's derivative by x is
//     −π·s·U′_{n−1}(c) at every x, with U′_{n−1} = Σ 2(j+1)·U_j over j =
//     n − 2, n − 4, …: the U_j the recurrence for U_{n−1} passes anyway,
//     a multiplication and an addition every other step, where U′'s own
//     recurrence (tried before, above) took three operations every step;
//     s = √(−v(2 + v)) with v = cos πd − 1 from the cosine's pieces
//     without its constant (cosPiVLanes), to a few ulp at every d; the
//     derivative by N πd·T_n/s, its limit where d = 0. One formula, no
//     branch: the closed form, the near-peak branch, the once form of
//     the Go 1.27 AVX-512 kernel (and lanegen's Target.Inline, which
//     only it used) and its copy of the closed form are gone, and the
//     crystal's gradient has no division left. Against 256-bit
//     arithmetic the derivative is as close as the closed form was
//     (~5e-15 for N = 5, ~5e-13 for N up to 32, relative to |∂/∂x| + N);
//     its last bits differ from before. Without the branch, Go's
//     inlining of the gather (vgatherAVX512) suits the Go 1.27
//     gradient kernels again: with the call (vgatherCallAVX512, now
//     gone) they took 1.08× (crystal's) and 1.10× (whole) as long.
//     Mosaic case: Go 1.27 build gradient 0.90×, crystal's 0.89×,
//     forward 0.99×; Go 1.26 0.97×, 0.86×, 0.96×; default build 0.98×,
//     0.93×, 1.01×. Cubic 1024² (quartiles ±5–10 %): Go 1.27 gradient
//     1.00×, crystal's 0.93×; Go 1.26 1.02×, 0.96×. Measured and left
//     out: the recurrence's start for n's parity from laneReps instead
//     of a branch (no vector phi; Go 1.27 whole gradient 1.07×, crystal's
//     1.01×), and that branch removed altogether (n odd only, wrong for
//     even n: 1.05×, 1.05×): what the register allocator does around the
//     recurrence's loop, which it spills values live across, weighs more
//     than the operations. Without the square roots (results wrong) the
//     crystal's gradient took 0.97×: the term loop is not bound by them
//     (a 512-bit square root takes 16 cycles a vector here, a division
//     9, a multiplication or an addition 1: a micro-benchmark of
//     independent chains), nor by its multiplications alone (~90 a
//     vector of terms, against ~200 cycles a vector it takes). Then the
//     crystal's loss rows compute the polarization factor alone
//     (lossFrontLanes' pol 3: polarizationLanes, the forward rows'
//     bits), not its derivatives, which no crystal adjoint takes: at
//     cubic 1024², where the loss rows' front was a fifth of the
//     crystal's gradient (perf), 0.90× (Go 1.27 build), 0.86× (default
//     build), 0.95× (Go 1.26; quartiles ±5–8 %).
//
//     Then the frame offset above, measured again here with one binary
//     (its kernel called through wrappers 0–56 bytes deep, picked by an
//     environment variable, so that the code and its layout are the
//     same): the Go 1.27 crystal's gradient took 87–102 ms (mosaic
//     case, medians of 6), fast at two offsets 32 bytes apart (Zen 4
//     moves a 512-bit value as two 256-bit halves, so 32-byte alignment
//     is enough there); the Go 1.26 whole gradient 128–164 ms (fastest
//     runs). Every measurement above carries this: a change anywhere
//     between the worker's start and a kernel moves the kernels' frames.
//     So each vector kernel of the terms and of the forward rows runs
//     through a frameTune (frametune.go): on its first 8·24 calls it
//     tries the eight offsets in turn, each call's time per pixel noted
//     (the least of each offset's calls counts), then keeps the fastest;
//     its wrapper measures where its own frame sits, so the offset is
//     the kernel's, whatever the caller's depth. The same results at
//     every offset. Against 3fb5b29 (turns, 10 rounds): Go 1.26 build
//     gradient 0.87× (mosaic case) and 0.91× (cubic 1024²), crystal's
//     0.93× and 0.84×, forward 0.86× and 0.97×; the Go 1.27 build's
//     kernels happened to sit at fast offsets at 3fb5b29 already
//     (0.95–1.03×). The backward pass (lossBackLanes) through one gained
//     nothing measurable (0.95–1.02×) and does not. With it, lanegen's
//     //lanegen:last (which kept generated names, and so frames, where
//     they were) went: renaming no longer moves a tuned kernel's speed. Altogether, against
//     the session's start (turns, 10–12 rounds), mosaic case: Go 1.27
//     build forward 0.96×, gradient 0.83×, crystal's 0.85×; Go 1.26 0.84×,
//     0.89×, 0.87×. Gradient/forward (Go 1.27, 15 rounds): mosaic case
//     1.95, crystal's 1.63; cubic 1024² 2.26 and 1.66. Then the
//     backward pass's slot sums: each loop over groups of pixels held a
//     loop over the m slot vectors, of one turn in the vector builds
//     (all but Go 1.27's AVX2), and Go's register allocator spilled the
//     running sums around it: a fifth of lossBackLanes' samples at cubic
//     1024² sat on one reload of a sum. One loop over the pixel vectors,
//     the vector from p added to slot vector p/lanes mod m (0 for m = 1,
//     which Go folds), keeps them in registers, the same additions in the
//     same order: Go 1.27 build gradient 0.97–0.98×, crystal's
//     0.95–0.985×; Go 1.26 0.98–1.00×. Tried and left out: g·scale·P·ω
//     formed once per chunk for the row sums (the same bits;
//     0.98–1.00×), rowChunk 128 (1.00–1.06×), frameTune on the loss
//     rows' front and backward pass (0.98–1.01×), and sincg's
//     recurrence pairs as a chain of switch cases entered at their count
//     instead of a loop (no loop for the allocator to spill around, but
//     the kernels 1.8× the size and more spills: 1.13× and 1.16×).
//     How far the whole gradient is from 1.8× its forward here: with
//     ∂/∂N's formula left out (results wrong; its sums kept) the
//     gradient took 0.94× (mosaic case) and 0.95× (cubic 1024²), so
//     even a free derivative by N leaves 1.82× on the mosaic case; the
//     crystal's gradient, without N, σ and the detector's sums, is 0.82×
//     of the whole there.
//
//   - Seventeenth session (the same AMD EPYC; perf samples per function
//     over 150 runs, and turns against the session's start 6969276):
//     the loss rows' front computes the polarization in a second loop
//     over the directions the first stored (one loop's chain per vector,
//     a square root and a division for 1/R and then the polarization's
//     two divisions, was longer than the processor overlapped: the
//     front's samples 0.77× at cubic 1024²). A gradient tile's loss value
//     is eight compensated sums, a chunk's p-th term in sum p mod 8
//     (lossSum; on the per-pixel walk, a pixel's column decides), and for
//     the summed-image and Poisson losses lossSumsLanes adds a vector of
//     terms at a time:
//     Neumaier's step on every lane, both branches computed and the one
//     the scalar step takes kept (one sum in pixel order, a chain of
//     dependent additions, was 8 % of a cubic 1024² gradient; four
//     interleaved scalar chains, tried before (above), had gained
//     nothing). The value's last bits changed; the fits' results
//     did not (the README fit's and the DIALS series fit's fit.json are
//     identical, and so is every row's evaluation count in the capture
//     study). A chunk whose indices in the loss's values follow one
//     another reads its counts, weights and background in place (gather
//     copied them one by one unless they were a weighted pixel list's:
//     ~7 cycles a pixel of a full-image Poisson gradient), and the
//     summed-image loss without a pixel list, which reads only their
//     number, no longer has them written (half of lossRow's samples at
//     1024²). Together, Go 1.27 build: cubic 1024²
//     gradient 0.90×, crystal's 0.87× (gradient/forward 2.02 → 1.92,
//     crystal's 1.64 → 1.51, 20 rounds); mosaic case 0.985× and 0.97×
//     (1.89 → 1.90 and 1.58 → 1.57: its forward measured 0.99× in that
//     run); Go 1.26 build 0.93×, 0.89× and 0.96×, 0.99–1.04× (the last
//     moves with the offset each process's frameTune keeps); default
//     build 0.86×, 0.97× and 0.98×, 1.00×. A full-image Poisson gradient
//     at cubic 1024² (Go 1.27 build, one CPU) 23.3 → 19.7 ms. Then the
//     front stopped storing the sums' starting values for the first
//     source's terms to load: the terms start them (termLanes.fresh;
//     the front's samples 0.68×, all 0.93× at 1024²). Against the
//     session's start (40 rounds): cubic 1024² gradient 0.84×, crystal's
//     0.82×. Gradient/forward at 1024² in six sets of fresh processes
//     1.65–1.84 (the start 2.10–2.23), each set's forward 8.0–9.7 ms for
//     the same code; mosaic case 1.88–1.90. Measured and
//     left out (perf or turns): the geometry adjoint's coefficient a
//     stored and its six sums in a loop of their own (the backward pass
//     1.4×); the row sums of two orientations in one pass over the
//     pixels, 18 running sums (mosaic case 1.07×); the ∂S/∂(h, k, l)
//     arrays 2048 + 64 bytes apart instead of 2048, spreading a vector's
//     stores over more cache sets (1.00×); the row sums' factors sb·|d − inc|²,
//     sb/R, fdet·sb/R formed once per chunk (the backward pass 0.89× with
//     10 domains, 1.25× with one orientation); loops 1 and 2 of the
//     backward pass as one, 13 running sums (its samples 1.1×);
//     the geometry adjoint's loop without its branches (no change); the
//     terms with the three sincgs' recurrences side by side again, in
//     Go 1.27, whose 31 registers might hold them (1.17×), with sin πd
//     from its polynomial instead of a square root, ∂/∂N then π·T_n/p
//     with p = sin πd/d (1.11×), with the structure factor gathered
//     before the lattice factors (1.06×), and with the table's cells
//     without data marked by a negative value (−|default F|, |F|
//     elsewhere: F enters squared) instead of a second gather from
//     missBits (1.00×, one gather of two fewer per term); doubling by
//     an addition instead of a multiplication where the gradient's terms
//     double (1.00×); the orientation loop unrolled for one orientation
//     (0.97× of the terms at 1024²). The terms are bound neither by
//     their multiplications, nor their gathers, nor their square roots
//     and divisions alone; without event counters here (perf has only
//     cpu-clock on this virtual machine) what binds them is not known.
//
//   - Eighteenth session (the same AMD EPYC, its clock measured at
//     3.57 GHz by a chain of dependent additions; turns, Go 1.27 build,
//     mosaic case, 12–30 rounds, quartiles ±3 %): cos πd is 1 + v with v
//     summed with its largest piece last (cosPiVLanes; within 2.09e-16 of
//     cos πd instead of 2.26e-16, rms 4.84e-17 instead of 6.06e-17):
//     the gradient's sine takes v without three additions of its own
//     (gradient 0.99×, forward 0.98×: no measurable change in time).
//     The terms kernel (83 % of the mosaic gradient's samples) takes
//     ~229 cycles per orientation and vector of eight pixels: 627
//     instructions as Go 1.27 compiles it, 198 of them floating-point
//     arithmetic, 90 vector moves (constants and spills), ~170 scalar
//     (addresses, bounds checks, the gather's loads). llvm-mca (LLVM 15,
//     which has no Zen 4 model; its icelake-server one) puts its
//     resource bound at 125 cycles and simulates 242, the back end held
//     up as much by dependency chains as by ports. Measured and left
//     out: ∂/∂N as (πd·T_n/s²)·s, the division starting from s² beside
//     the square root instead of after it (1.03×); as timing checks with
//     wrong results, the three divisions made multiplications (0.98×)
//     and the three square roots (0.96–0.98×): the divider is not what
//     binds the loop; the recurrence written out for N = 5 without its
//     loop (gradient 1.09×, forward 0.98×); the six sums loaded and
//     stored per orientation instead of held across the orientation
//     loop (1.01×); σ taken out of the terms and summed in the row sums'
//     loop instead, from the stored ∂S/∂(h, k, l) and (h, k, l)_d =
//     λ⁻¹·O·d recomputed per pixel (perf samples over 60 runs: the terms
//     21 712 → 21 251, the backward pass 3 057 → 7 298; turns 1.12×,
//     cubic 1024² 1.10×). turns with one binary against a copy of itself
//     gave 1.04× (quartiles 1.02–1.09): two processes of the same code
//     differ by several per cent, so a single turns run does not resolve
//     a change of that size (a σ left out altogether measured 0.86× in
//     one run and 0.98× in the next; its perf samples, 0.96×). Not
//     frameTune's doing: with every offset forced in turn, the mosaic
//     gradient (fastest of 8 runs) took 94 and 96 ms at offsets 1 and 5
//     (the same on Zen 4, which moves 32-byte halves) and 107–109 ms at
//     the others,
//     and in six processes the tuner kept 1 or 5 every time; the
//     forward's calls differ by 1–2 % across offsets.
//     A change to what both kernels share makes the
//     gradient/forward ratio larger, not smaller. Counted in the
//     disassembly of one turn of each kernel's orientation loop (Go
//     1.27, AVX-512): the gradient's terms 283 vector operations besides
//     moves in 627 instructions, the forward's 164 in 290: 1.73×, near
//     their measured time ratio (~1.7×). The gradient's own ~119 (σ,
//     ∂/∂N, sincg's derivatives, the missing cells' gather, the stores)
//     are what it needs; each further saving found is a few of them
//     (∂/∂N's π and the default F's 2 taken out of the sums, 1–2 %
//     each), and the loss rows' front and backward pass add ~15 % on top.
//
//   - Nineteenth session (the same AMD EPYC; turns, Go 1.27 build,
//     mosaic case, 20–30 rounds against the session's start, whose
//     gradient/forward was 1.93 and crystal's 1.59, cubic 1024² 1.78):
//     Config.NoN and NoDefaultF (graph's Simulator.GradientFor, which an
//     objective runs for the inputs its parameters move) leave out the
//     derivatives by N and the default F: termsGradNoNLanes and
//     termsGradAxesNoNLanes are the terms without the N sums (the
//     compiler then drops sincg's derivative by N as well), and perDef is
//     off. As timing checks in the whole gradient: the N sums left out
//     0.905× (the division by s alone 1.00×, the peak's merge 0.99×, ∂/∂N
//     as T_n alone 0.97×), σ 0.97×, the default F's sum 0.97×. The
//     README's DIALS fit (cell, orientation, detector) 0.89×, the same
//     fit.json. Config.NoGeometry (nothing of the detector's or the
//     beam's wanted: a fit of the crystal, its N and its scale, as
//     diffBragg's stills refinement) takes the crystal's loss rows
//     (polarization factor alone, no σ: termsGradNoSigmaLanes and
//     termsGradAxesNoSigmaLanes; the backward pass's row sums and N's,
//     the default F's, the fluence's and the water seed's sums): turns'
//     size mode against the whole gradient 0.96× (mosaic case), 0.89×
//     (cubic 1024²); the README's example fit refining cell,
//     orientation, N and scale 0.47–0.49 → 0.43–0.47 s, the same
//     fit.json. The DIALS fit's set (turns' detector mode) is 0.89× and
//     0.95×. Measured and left out: the crystal's sums left out for a fit
//     of the detector alone (the ∂S/∂(h, k, l) stores and the row sums, as
//     a timing check: 0.93× on the mosaic case, 1.0× at cubic 1024²). Measured and left out, each within ±2 % (the whole
//     gradient): the ∂S/∂(h, k, l) stores through a pointer checked once
//     per call instead of a slice each (24 fewer instructions a turn;
//     0.976×, then 0.992×); the structure factors' gather without its
//     bounds checks (1.01×); the three indices' cosine and square root
//     before their three recurrences (1.00×); 2x as x + x in the gradient
//     (five multiplications a turn made additions, the same bits: 1.00×);
//     ∂/∂N's peak as T_n·c, the same ±1, for its two logical operations
//     (1.01×). Adding ten independent multiplications (and nine
//     additions summing them) to each turn took 1.06×, nineteen additions
//     1.08×: ~0.35–0.45 % per arithmetic operation, so the 5 % the
//     mosaic case's whole gradient is over 1.8× would take ~13 of them
//     out of the ~90 the gradient adds to each turn. Go 1.27's rewrite of
//     logical operations into VPTERNLOGQ (rewritetern.go) only classifies
//     the signed vector types' And, Or and Xor (golang/go#79666), and this
//     code's are on Uint64x8; with the vocabulary's vand, vor and vxor on
//     Int64x8 the compiler (1.27.3) built the AVX-512 gradient kernels
//     with invalid instructions (a VPTERNLOGQ whose third operand, a
//     constant loaded from memory, it folded away: "invalid instruction"
//     from the assembler), so they stay unsigned. Whole processes: the
//     simulate help's flag list built only when printed (--version 0.91×,
//     cubic 1024² simulate 0.95×); the float image on 2 MB-aligned huge
//     pages (0.99×, left out: the slack costs zeroing on reuse).
//
//   - Twentieth session (the same AMD EPYC, 3.6 GHz by a chain of
//     dependent additions; turns, Go 1.27 build). The loss rows' runs of
//     pixels lost two stores per pixel (4 % of the samples of the
//     gradient at cubic 1024²): chunkPixels hands out slices of a shared
//     table of columns instead of filling a list (2.4 %), and the runs'
//     coordinates are formed on vector lanes (stepsLanes; fillRun's
//     eight scalar stores at a time were 1.6 %, the lanes 0.7 %). With
//     the whole processes' changes (hugeMost; formats' floatChunk):
//     gradient/forward at cubic 1024² 1.59 (quartiles 1.50–1.65, 30
//     rounds; the forward as fast as the session start's, 1.007×), the
//     mosaic case 1.81–1.86. One turn of the mosaic terms is 599
//     instructions, 263 of them vector operations besides moves (107
//     multiplications, 76 additions and subtractions, 3 square roots, 3
//     divisions, 36 for the two gathers) and 80 vector loads and stores,
//     in ~220 cycles: about twice what the multiplications alone take on
//     the two 256-bit multiply pipes. Measured and left out (mosaic
//     case's whole gradient unless said): the derivatives' multiply-adds
//     fused (N's sums, σ, U′'s sum; the scalar kernels through math.FMA,
//     so the lanes would keep the scalar bits; 0.997×); the three
//     indices' sincg derivatives interleaved statement by statement in
//     Go 1.27 (1.19×, more spills); the square root made a
//     multiplication, as a timing check (0.97×); ∂L/∂S stored once per
//     chunk for the row sums, the backward pass and the shape sums
//     (0.994×, the backward pass's samples 10.6 → 10.0 %; stored in the
//     backward pass's first loop, or the row sums moved after it, the
//     running sums were spilled to 8-byte-aligned stack slots: 1.11–1.13×);
//     loss-row chunks of 128 and 512 pixels (1.055× and 1.059× at cubic
//     1024²).
//
//   - Twenty-first session (the same AMD EPYC, in a slower phase: the
//     session start's mosaic gradient/forward measured 1.93–2.08; turns,
//     Go 1.27 build, 20–30 rounds). The backward pass's loops ran inline
//     in lossBackLanes, whose many slices kept the loops' addresses and
//     counters on the stack: the row sums' loop was 91 instructions a
//     vector for 9 multiplications and 9 additions. Each loop is now a
//     function of its own over arrays of rowChunk (rowSumsFirstLanes,
//     rowSumsLanes, backFactorsLanes, backGeometryLanes; ~50 instructions,
//     one bounds check a vector), and the row sums' factors sb·|d − inc|²,
//     sb/R and fdet·sb/R are formed with a source's first orientation and
//     kept (lossFront's ra, rb, rc): the gradient 0.95× (mosaic case) and
//     0.94× (cubic 1024², quartiles 0.86–1.06). The terms leave their
//     constant factors to the sums (termUnits: 2, −π, π), and ∂/∂N's limit
//     at a peak takes its sign from the parities (U_{n−1}(±1) =
//     n·(±1)^(n−1)): 260 vector operations a turn besides moves instead
//     of 271, the mosaic gradient 0.97×. Together 0.923–0.928× (three
//     sets), gradient/forward 1.73–1.74. Measured and left out: the
//     loss rows' chunks cut to 136 pixels for the ten domains' ∂S/∂(h, k,
//     l) to fit the first-level cache (1.036×); the row sums two
//     orientations a pass, inline as they then were (1.06×);
//     lossBackSubLanes' loop over arrays (the two-layer case's gradient
//     1.035×, quartiles 0.90–1.12: no change measured). As timing checks
//     with wrong results: the divisions made multiplications (1.00×);
//     the structure factor's gather replaced by a constant in both
//     kernels: the forward 0.80×, the gradient 0.906× — the gather is a
//     fifth of the mosaic forward's time (~100 scalar instructions of a
//     285-instruction turn), and a faster one would take the same time
//     off both, which raises the ratio.
//
// Before the vector lanes, per pixel (callgrind by instruction, cubic rows,
// scalar build): the forward did 189 floating-point operations in 537
// instructions, the fused loss and gradient 355 in 921 (1.88× and 1.72×);
// with 10 domains 1341 in 3277 against 2323 in 5782 (1.73×, 1.76×). Now
// (cachegrind, whole cubic 1024² graph runs less 256² ones, per pixel):
// forward 531 (before the lanes) → 467 instructions in the default build,
// 157 in the vector build; gradient 910 → 1055 default, 411 vector.
// Counting the physics package's functions only (the gradient runs'
// garbage collection and compile vary between runs), the minimax cos
// took the forward from 447 to 430 (default) and 142 to 134 (vector),
// the gradient from 1023 to 1006 and 368 to 362.
// Vector instructions do four pixels' work, so their counts say less
// about time than scalar ones; gradient/forward time ratios
// (BenchmarkGradientRatio*) are in the README.
//
// LossGradient fuses image, a pixel-wise loss and its gradient: the loss
// term's derivative needs the pixel's intensity, which the same walk has
// just produced, so nothing is recomputed. Both reduce over 64 row tiles
// fixed by the image, in tile order: deterministic for any thread count.
package physics
