; vcopy.s - copy a vector with a partial lane mask.
;
; Fills a 16-word source block (0x100, 0x104, ...) and a 16-word destination block
; (all ones) in scratchpad RAM, loads the source as one vector (NLANES lanes of 32
; bits, lane 0 at the lowest address), and stores it back with lane mask 0x5555:
; only the even lanes are written, the odd lanes keep 0xFFFFFFFF (merge masking,
; spec 1.3).  Words past NLANES are never touched.

        ldi     r1, 0xFFFC0000      ; source block
        ldi     r2, 0xFFFC0100      ; destination block
        ldi     r3, 0               ; byte offset
        ldi     r5, 64              ; 16 words
        ldi     r7, -1
fill:   addi    r4, r3, 0x100       ; source word = 0x100 + offset
        st.t    r4, [r1+r3]
        st.t    r7, [r2+r3]
        addi    r3, r3, 4
        bne     r3, r5, fill
        ld.t    v1, 0[r1]           ; vector load: every lane
        ldi     vm1, 0x5555         ; lane mask in an ordinary register (r49)
        st.t    v1, 0[r2], vm1      ; masked vector store: even lanes only
done:   bra     done
