; trap.s - an undefined instruction, serviced by a handler that returns past it.
;
; Every exception enters machine mode at TVEC3 + 0x20 x (mode it came from), so a
; fault in machine mode lands at TVEC3 + 0x60.  The handler reads CAUSE (37 =
; UNIMP) and EIP (the faulting instruction), advances EIP by one instruction (EIP
; is writable in machine mode, config eip_writable) and returns with RTI.

        ldi     r1, vectors
        csrrw   r0, r1, tvec3       ; exception vector base
        ldi     r10, 1
bad:    .half   3                   ; opcode 3 is undefined: UNIMP (cause 37)
        .word   0
        addi    r10, r10, 1         ; runs after the handler returns
done:   bra     done

vectors:
        .space  0x60                ; entries for user, supervisor, hypervisor mode
        csrrd   r11, r0, cause      ; machine-mode entry: CAUSE of the machine copy
        csrrd   r12, r0, eip        ; address of the undefined instruction
        addi    r12, r12, 6         ; skip it
        csrrw   r0, r12, eip
        rti
