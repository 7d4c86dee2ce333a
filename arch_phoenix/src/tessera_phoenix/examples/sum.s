; sum.s - sum the integers 1..100 and store the result in scratchpad RAM.
;
; Runs on thread 0 from the reset address (0xFFFD0000, boot ROM).  Scalar ALU,
; a counted loop with a conditional branch, a store, and the self-loop that ends
; every example (halt_on_self_loop).

        ldi     r1, 100             ; n
        ldi     r2, 0               ; sum
loop:   add     r2, r2, r1          ; sum += n
        addi    r1, r1, -1          ; n -= 1
        bne     r1, r0, loop
        ldi     r3, 0xFFFC0000      ; scratchpad RAM (the assembler appends a postfix)
        st.t    r2, 0[r3]
done:   bra     done
