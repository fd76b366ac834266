"""Mixed trains: detailed multibody railway vehicles (:mod:`hpcrail.models.vehicle`) inside a long LTD consist
(:mod:`hpcrail.models.ltd`), one state vector and one integrator.  The kernels are :mod:`.kernel`; the
hidden-vehicle blocks on threads are :mod:`hpcrail.partition.mixed`; the model kind is
:mod:`hpcrail.kinds.mixed_train`.  Source: Bosso et al. 2024 (paper 000) §2, Figure 1, eqs 8-11."""
