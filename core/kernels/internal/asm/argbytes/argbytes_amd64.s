//go:build !purego

#include "textflag.h"
#include "args.h"

// RUNS finds, for each of the CX runs of DX bytes at SI, the first index of
// its extreme under OP (VPMAXUB, VPMAXSB, VPMINUB or VPMINSB) and stores it
// to DI as an int32. Lanes past the run hold the fill byte (Z5), which
// cannot change the extreme; the compare is masked to the run (K1), so the
// first lane equal to the extreme is the run's.
#define RUNS(OP, Lloop) \
Lloop: \
	VMOVDQU64     Z5, Z0; \
	VMOVDQU8      (SI), K1, Z0; \
	VEXTRACTI64X4 $1, Z0, Y1; \
	OP            Y1, Y0, Y1; \
	VEXTRACTI128  $1, Y1, X2; \
	OP            X2, X1, X2; \
	VPSRLDQ       $8, X2, X3; \
	OP            X3, X2, X3; \
	VPSRLDQ       $4, X3, X4; \
	OP            X4, X3, X4; \
	VPSRLDQ       $2, X4, X6; \
	OP            X6, X4, X6; \
	VPSRLDQ       $1, X6, X7; \
	OP            X7, X6, X7; \
	VPBROADCASTB  X7, Z8; \
	VPCMPEQB      Z8, Z0, K1, K2; \
	KMOVQ         K2, AX; \
	TZCNTQ        AX, AX; \
	MOVL          AX, (DI); \
	ADDQ          DX, SI; \
	ADDQ          $4, DI; \
	DECQ          CX; \
	JNZ           Lloop; \
	JMP           done

// func argBytesAVX512(a *args)
TEXT ·argBytesAVX512(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), BX
	MOVQ AB_N(BX), CX
	TESTQ CX, CX
	JZ   done
	MOVQ AB_SRC(BX), SI
	MOVQ AB_SIZE(BX), DX
	MOVQ AB_DST(BX), DI
	KMOVQ AB_MASK(BX), K1
	VPBROADCASTB AB_FILL(BX), Z5
	MOVQ AB_MODE(BX), AX
	CMPQ AX, $1
	JEQ  maxu
	CMPQ AX, $3
	JEQ  maxs
	CMPQ AX, $2
	JEQ  mins
	RUNS(VPMINUB, minuloop)
maxu:
	RUNS(VPMAXUB, maxuloop)
maxs:
	RUNS(VPMAXSB, maxsloop)
mins:
	RUNS(VPMINSB, minsloop)

done:
	VZEROUPPER
	RET
