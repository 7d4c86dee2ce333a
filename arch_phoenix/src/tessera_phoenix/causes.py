"""rfPhoenix exception cause codes (spec section 1.7; document numbering is canonical)."""

IBE = 1        # instruction bus error
EXF = 2        # executable fault
TLB = 4        # TLB miss (software-managed TLB)
SSM = 32       # single step
DBG = 33       # debug address match
TGT = 34       # call target
MEM = 35       # memory fault
IADR = 36      # bad instruction address
UNIMP = 37     # unimplemented instruction
FLT = 38       # floating point
CHK = 39       # bounds check
DBZ = 40       # divide by zero
OFL = 41       # overflow
ALN = 48       # alignment (never raised: unaligned access is supported)
KEY = 49
DWF = 50       # data write fault
DRF = 51       # data read fault
SGB = 52
PRIV = 53      # privilege violation
CMT = 54
BT = 55
STK = 56
CPF = 57       # code page fault
DPF = 58       # data page fault
LVL = 59       # page-table level error
DBE = 60       # data bus error
PMA = 61       # physical-memory-attribute check failed
NMI = 62
BRK = 63       # BRK instruction
PFX = 200      # too many postfixes
CSR = 236      # CSR access violation
RTI = 237      # RTI with no active exception
IRQ = 238      # external interrupt
SYS = 240
TMR = 242
RST = 253

NAMES = {v: k for k, v in dict(globals()).items() if k.isupper() and isinstance(v, int)}


def name(cause: int) -> str:
    return NAMES.get(cause, f"cause {cause}")
